/**
 * `anyperf sweep KEY=V1,V2,... [--repeat N] -- DIALECT ARGS...`: the sweep procedure around a dialect's client
 * (iperf3, iperf, netperf, ntttcp), so it works against stock servers too. Each point runs the dialect in this
 * process with the point's flag in its own spelling; its figures are read from the engine's TestRun it reported
 * through (the dialect's own report is printed as usual), and the table follows at the end.
 */
import { UserError } from "../../src/errors.ts";
import { onRunStarted } from "../../src/engine/registry.ts";
import { figures, type TestRun } from "../../src/engine/test-run.ts";
import { concurrentSum } from "../../src/formulas.ts";
import { interruptedExitCode, shutdownSignal } from "../../src/signals.ts";
import type { Results } from "../../src/report/result.ts";
import { aggregate, headlineOf, primaryKey, type Headline } from "../../src/procedure/headline.ts";
import { gridPoints, pointLabel, takeProcedureOptions, type Point, type SweepKey } from "../../src/procedure/options.ts";
import { appendHistory, checkHistoryPath, HISTORY_VERSION, newId } from "../../src/procedure/history.ts";
import { runDetail } from "../../src/procedure/run-detail.ts";
import { readHostFacts } from "../../src/procedure/host-facts.ts";
import { bestPoint, sweepTable, type PointOutcome } from "../../src/procedure/report.ts";

type Entry = (argv: string[]) => Promise<number>;

interface Dialect {
  load: () => Promise<Entry>;
  /** The dialect's spelling of each sweep key; a key it lacks is refused. */
  flags: Partial<Record<SweepKey, string>>;
  /** Keys that are test-specific options (netperf's, after `--`): each flag gets the value. */
  testSpecific?: Partial<Record<SweepKey, string[]>>;
  /** The flag naming the server, for the history's peer. */
  peerFlag: string;
}

const DIALECTS: Record<string, Dialect> = {
  iperf3: { load: async () => (await import("../iperf3/main.ts")).main, flags: { streams: "-P", length: "-l", window: "-w", rate: "-b" }, peerFlag: "-c" },
  iperf: { load: async () => (await import("../iperf2/main.ts")).main, flags: { streams: "-P", length: "-l", window: "-w", rate: "-b" }, peerFlag: "-c" },
  // Our --instances runs concurrent netperf tests: the only way netperf has to several streams. Its socket buffers
  // are test-specific: -s sets this end's send and receive buffers, -S the netserver's.
  netperf: {
    load: async () => (await import("../netperf/main.ts")).netperfMain,
    flags: { streams: "--instances" },
    testSpecific: { window: ["-s", "-S"] },
    peerFlag: "-H",
  },
  // ntttcp-for-linux has no socket-buffer option (its -b is the write size, swept as length).
  ntttcp: { load: async () => (await import("../ntttcp/main.ts")).main, flags: { streams: "-P", length: "-b" }, peerFlag: "-s" },
};

export const SWEEP_USAGE = `usage: anyperf sweep KEY=V1,V2,... [KEY=...] [--repeat N] [--history FILE | --no-history] -- CLIENT ARGS...
  CLIENT: ${Object.keys(DIALECTS).join(", ")} (our dialect of it, against a stock or anyperf server)
  KEY: streams (iperf3/iperf -P, netperf --instances, ntttcp -P), length (iperf3/iperf -l, ntttcp -b),
       window (iperf3/iperf -w, netperf -- -s V -S V), rate (iperf3/iperf -b)
  e.g. anyperf sweep streams=1,2,4 -- iperf3 -c 192.0.2.7 -t 5`;

/**
 * Several TestRuns of one point (netperf --instances) ran side by side: their rates add up, and their latency is
 * every transaction of every run pooled (histograms added), as the dialect's own combined latency line pools them.
 */
export function combined(runs: Results[], tests: readonly TestRun[]): Headline {
  if (runs.length === 1) return headlineOf(runs[0]!);
  const hs = runs.map(headlineOf);
  const out: Headline = {};
  for (const k of ["throughput_bps", "packets_per_second", "transactions_per_second"] as const) {
    const vs = hs.map((h) => h[k]).filter((v): v is number => v !== undefined);
    if (vs.length === hs.length) out[k] = concurrentSum(vs);
  }
  const latency = figures(tests.flatMap((t) => t.measured().reported()), 1, runs[0]!).latency_us;
  if (latency) Object.assign(out, { latency_p50_us: latency.p50, latency_p99_us: latency.p99 });
  if (hs[0]!.cpu_busy_percent !== undefined) out.cpu_busy_percent = hs[0]!.cpu_busy_percent;
  return out;
}

export async function sweepMain(argv: string[]): Promise<number> {
  const dash = argv.indexOf("--");
  if (argv.includes("--help") || argv.includes("-h") && (dash < 0 || argv.indexOf("-h") < dash)) {
    console.log(SWEEP_USAGE);
    return 0;
  }
  const [name, ...clientArgs] = dash < 0 ? [] : argv.slice(dash + 1);
  const dialect = name === undefined ? undefined : DIALECTS[name];
  if (!dialect) throw new UserError(`sweep needs a client after --: anyperf sweep streams=1,2 -- ${Object.keys(DIALECTS).join("|")} ARGS...`, 2);
  const own = argv.slice(0, dash).flatMap((a) => (/^[a-z]+=/.test(a) ? ["--sweep", a] : [a]));
  const proc = takeProcedureOptions(own);
  if (proc.rest.length > 0) throw new UserError(`sweep: '${proc.rest.join(" ")}' is not KEY=V1,V2 or --repeat/--history/--no-history; put the client's options after --`, 2);
  if (proc.sweeps.length === 0) throw new UserError("sweep: nothing to vary; pass KEY=V1,V2,... before --, e.g. streams=1,2,4", 2);
  const keys = [...Object.keys(dialect.flags), ...Object.keys(dialect.testSpecific ?? {})];
  for (const s of proc.sweeps) if (!keys.includes(s.key)) throw new UserError(`sweep ${s.key}: ${name} has no option for it; sweep ${keys.join(" or ")}`, 2);
  const points = gridPoints(proc.sweeps);
  const args = (p: Point) => {
    const entries = Object.entries(p) as [SweepKey, string][];
    const before = entries.flatMap(([k, v]) => {
      const flag = dialect.flags[k];
      return flag ? [flag, v] : [];
    });
    // After the user's own test-specific options, so the point's value is the one the dialect keeps.
    const after = entries.flatMap(([k, v]) => (dialect.testSpecific?.[k] ?? []).flatMap((f) => [f, v]));
    return [...before, ...clientArgs, ...(after.length && !clientArgs.includes("--") ? ["--"] : []), ...after];
  };
  const peerAt = clientArgs.indexOf(dialect.peerFlag);
  const peer = peerAt < 0 ? undefined : clientArgs[peerAt + 1];
  if (proc.history !== undefined && proc.historyGiven) checkHistoryPath(proc.history);
  const facts = proc.history === undefined ? undefined : readHostFacts(peer ?? "");
  const entry = await dialect.load();
  const signal = shutdownSignal();
  const group = newId();
  const done: PointOutcome[] = [];
  let failure: string | undefined;
  let test: Results["test"] = "stream";
  for (const pt of points) {
    const runs: Results[] = [];
    const heads: Headline[] = [];
    for (let n = 1; n <= proc.repeat && !signal.aborted && failure === undefined; n++) {
      const started: TestRun[] = [];
      const off = onRunStarted((r) => started.push(r));
      let code: number;
      try {
        code = await entry(args(pt));
      } finally {
        off();
      }
      const results = started.map((r) => r.results());
      if (code !== 0 || results.length === 0 || results.some((r) => r.errors.length > 0)) {
        failure = `point ${pointLabel(pt)}, run ${n}: ${name} ${code !== 0 ? `exited ${code}` : results.length === 0 ? "ran no test" : results.flatMap((r) => r.errors)[0]}`;
        break;
      }
      test = results[0]!.test;
      const h = combined(results, started);
      runs.push(...results.slice(0, 1));
      heads.push(h);
      if (facts !== undefined && proc.history !== undefined) {
        appendHistory(proc.history, {
          v: HISTORY_VERSION, id: newId(), time: results[0]!.started_at, argv: [name!, ...args(pt)], mode: name!, peer, transport: results[0]!.transport, test,
          group, point: pt, repeat: n, host: facts, results: h, summary: results.length === 1 ? results[0]!.summary : undefined,
          detail: results.length === 1 ? runDetail(results[0]!) : undefined, interrupted: results[0]!.interrupted, errors: [],
        });
      }
    }
    if (heads.length > 0) done.push({ point: pt, runs, aggregate: aggregate(heads) });
    if (signal.aborted || failure !== undefined) break;
  }
  const primary = primaryKey(test);
  console.log(sweepTable(done, primary, bestPoint(done, primary)));
  if (failure !== undefined) console.error(`anyperf: stopped early: ${failure}; the table holds the points before it`);
  return interruptedExitCode(signal) ?? (failure !== undefined ? 1 : 0);
}
