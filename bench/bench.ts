/**
 * scripts/bench: every workload of issue 8 with anyperf and with the stock tool in the same run, alternating the
 * order over the repeats, on loopback; prints the table and writes it as bench/results.json.
 */
import { parseArgs } from "node:util";
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join, resolve } from "node:path";
import { cpuPercent, type Outcome, type RowInput, summarizeRow } from "./aggregate.ts";
import { findPeers, toolVersion } from "./peers.ts";
import { Ports, stopAll } from "./processes.ts";
import { renderReport } from "./render.ts";
import { BenchReport, type Row } from "./report.ts";
import { formatFigure, formatPercent } from "./format.ts";
import { type Ctx, type SideSpec, type Workload, spawnMs, workloads } from "./workloads.ts";

const USAGE = `usage: scripts/bench [--quick] [--repeats N] [--seconds S] [--only ID,...]
  --quick        1 s runs (default: 3 s), same workloads and repeats
  --repeats N    repeats of every pair, order alternating (default 5)
  --seconds S    seconds per run
  --only IDS     only these rows (ids as in bench/results.json), e.g. tcp-1,udp-1`;

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    quick: { type: "boolean" },
    repeats: { type: "string" },
    seconds: { type: "string" },
    only: { type: "string" },
    help: { type: "boolean", short: "h" },
  },
});
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}

const root = resolve(import.meta.dir, "..");
const quick = values.quick ?? false;
const repeats = Number(values.repeats ?? 5);
const seconds = Number(values.seconds ?? (quick ? 1 : 3));
if (!Number.isInteger(repeats) || repeats < 1 || !(seconds > 0)) {
  console.error(`bench: --repeats takes a whole number ≥ 1 and --seconds a positive number\n${USAGE}`);
  process.exit(2);
}
/**
 * Rows that would start past this are reported as not run. Issue 8 bounded a full run at 10 minutes; issue 20 asked
 * for 5 repeats, and issue 30 added a dozen rows of many streams and processes: a full run of 5 repeats × 3 s took
 * 1,748 s on 7 December without ntttcp's rows, which add about 100.
 */
const BUDGET_S = quick ? 420 : 2100;
/** Start-up: spawns of each binary, alternating, after two warm-up spawns each. */
const SPAWNS = 20;

const anyperf = join(root, "dist", "anyperf");
const peers = findPeers(anyperf);
const cores = availableParallelism();
const ctx: Ctx = { anyperf, seconds, pinCpu: cores - 1, ports: new Ports(), peers };

for (const sig of ["SIGINT", "SIGTERM"] as const) {
  process.on(sig, () => {
    console.error(`\nbench: ${sig}, stopping its processes`);
    void stopAll().finally(() => process.exit(130));
  });
}

const loadavg = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
const startedAt = new Date();
const t0 = performance.now();
const elapsed = () => (performance.now() - t0) / 1000;
const loadStart = loadavg();
const log = (s: string) => console.error(s);

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function startupRow(): Row {
  const anyMs: number[] = [], refMs: number[] = [];
  const errors: string[] = [];
  const iperf3 = peers.iperf3;
  try {
    for (let i = 0; i < 2; i++) {
      spawnMs([anyperf, "--version"]);
      if (iperf3) spawnMs([iperf3, "--version"]);
    }
    for (let i = 0; i < SPAWNS; i++) {
      // Alternate which binary goes first so neither always follows the other's page-cache warm-up.
      const order = i % 2 === 0 ? ["any", "ref"] : ["ref", "any"];
      for (const who of order) {
        if (who === "any") anyMs.push(spawnMs([anyperf, "--version"]));
        else if (iperf3) refMs.push(spawnMs([iperf3, "--version"]));
      }
    }
  } catch (e) {
    errors.push(describe(e));
  }
  const input: RowInput = {
    id: "startup",
    workload: "binary start-up (--version)",
    unit: "ms",
    target: { kind: "anyperf-at-most", value: 15 },
    cpuScope: "not measured",
    statistic: "median",
    reference: iperf3 ? { label: "iperf3", how: `iperf3 --version, ${SPAWNS} spawns from the bench (Bun.spawnSync), wall ms to exit`, outcomes: refMs.map((v) => ({ value: v, cpuSeconds: 0 })) } : undefined,
    anyperf: { label: "anyperf", how: `anyperf --version, ${SPAWNS} spawns alternating with iperf3's, wall ms to exit`, outcomes: [...anyMs.map((v) => ({ value: v, cpuSeconds: 0 })), ...errors.map((error) => ({ error }))] },
  };
  const row = summarizeRow(input, 1);
  // One ratio of the medians: the spawns are interleaved, not paired repeats.
  if (row.reference?.figure && row.anyperf?.figure) {
    row.ratio = row.anyperf.figure / row.reference.figure;
    row.ratios = [row.ratio];
  }
  row.reference = row.reference && { ...row.reference, cpu_percent: null };
  row.anyperf = row.anyperf && { ...row.anyperf, cpu_percent: null };
  return row;
}

interface Pending {
  w: Workload;
  skipped?: string;
  ref: Outcome[];
  any: Outcome[];
}

/** Pairs a row runs: the repeats, times its factor. */
const repeatsOf = (w: Workload) => repeats * (w.repeatFactor ?? 1);

async function runSide(side: SideSpec, w: Workload, r: number): Promise<Outcome> {
  // A run costs its seconds plus a few for start-up and teardown; one that would end past the budget is not started.
  if (elapsed() + seconds + 3 > BUDGET_S) return { error: `not run: the ${BUDGET_S} s time budget was used up` };
  try {
    const s = await side.run(ctx);
    log(`  [${r + 1}/${repeatsOf(w)}] ${w.id} ${side.label}: ${formatFigure(s.value, w.unit)}, CPU ${formatPercent(cpuPercent(s, seconds))}`);
    return s;
  } catch (e) {
    log(`  [${r + 1}/${repeatsOf(w)}] ${w.id} ${side.label}: FAILED ${describe(e)}`);
    return { error: describe(e) };
  }
}

async function main(): Promise<number> {
  const only = values.only?.split(",").filter(Boolean);
  const all = workloads(ctx);
  const known = ["startup", ...all.map((w) => w.id)];
  const unknown = only?.filter((id) => !known.includes(id)) ?? [];
  if (unknown.length > 0) {
    console.error(`bench: no row ${unknown.join(", ")} for --only: pass ids from ${known.join(",")}`);
    return 2;
  }
  const version = toolVersion([anyperf, "--version"]);
  log(`bench: ${version}, ${repeats} repeats × ${seconds} s, ${cores} cores, load average ${loadStart}`);
  const rows: Row[] = [];
  if (!only || only.includes("startup")) {
    rows.push(startupRow());
    log(`  startup: anyperf ${rows[0]!.anyperf?.figure?.toFixed(1)} ms, iperf3 ${rows[0]!.reference?.figure?.toFixed(1) ?? "—"} ms`);
  }
  const pending: Pending[] = all
    .filter((w) => !only || only.includes(w.id))
    .map((w) => ({ w, skipped: w.reference?.missing ?? w.anyperf.missing, ref: [], any: [] }));
  for (const p of pending.filter((p) => p.skipped)) log(`  ${p.w.id}: skipped, ${p.skipped}`);
  const rounds = Math.max(...pending.map((p) => repeatsOf(p.w)), 0);
  for (let r = 0; r < rounds; r++) {
    for (const p of pending) {
      if (p.skipped || r >= repeatsOf(p.w)) continue;
      const sides = p.w.reference ? [{ s: p.w.reference, out: p.ref }, { s: p.w.anyperf, out: p.any }] : [{ s: p.w.anyperf, out: p.any }];
      if (r % 2 === 1) sides.reverse();
      for (const { s, out } of sides) out[r] = await runSide(s, p.w, r);
    }
  }
  for (const p of pending) {
    const { w } = p;
    rows.push(
      summarizeRow(
        {
          id: w.id,
          workload: w.workload,
          unit: w.unit,
          target: w.target,
          cpuScope: w.cpuScope,
          statistic: w.statistic,
          reference: w.reference && { label: w.reference.label, how: w.reference.how, outcomes: p.ref },
          anyperf: { label: w.anyperf.label, how: w.anyperf.how, outcomes: p.any },
          skipped: p.skipped,
        },
        seconds,
      ),
    );
  }
  const versions: Record<string, string> = {};
  if (peers.iperf3) versions.iperf3 = toolVersion([peers.iperf3, "--version"]);
  if (peers.iperf3Threads) versions.iperf3_threads = toolVersion([peers.iperf3Threads, "--version"]);
  if (peers.iperf) versions.iperf = toolVersion([peers.iperf, "-v"]);
  if (peers.netperf) versions.netperf = toolVersion([peers.netperf, "-V"]);
  if (peers.ntttcp) versions.ntttcp = toolVersion([peers.ntttcp, "-V"]);
  const report = BenchReport.parse({
    started_at: startedAt.toISOString(),
    finished_at: new Date().toISOString(),
    elapsed_s: elapsed(),
    quick,
    repeats,
    seconds,
    host: { cores, kernel: readFileSync("/proc/sys/kernel/osrelease", "utf8").trim(), loadavg_start: loadStart, loadavg_end: loadavg() },
    anyperf: { path: anyperf, version },
    peers: versions,
    rows,
  });
  const out = join(root, "bench", "results.json");
  writeFileSync(`${out}.tmp`, `${JSON.stringify(report, null, 2)}\n`);
  renameSync(`${out}.tmp`, out);
  console.log(renderReport(report));
  console.log(`\nwritten: bench/results.json`);
  return 0;
}

process.exit(await main());
