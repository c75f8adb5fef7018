/**
 * The never-hang table (issue 25): a stock client runs each option of its own option list against one of our
 * servers, every run under a hard time bound. A run ends applied (exit 0) or refused (non-zero exit with a line
 * saying why); a run the bound had to kill is a hang. After every refusal, and at the end of each lane, a plain
 * test must still pass against the same server: the server ended its side too and accepts the next test.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { spawnProc, waitBound, type Finished, type Proc } from "../support/processes.ts";

/** One row of a peer's option table: the option as its help names it, and the arguments that exercise it. */
export interface OptionCase {
  option: string;
  args: string[];
  /** The address the client connects to, when not 127.0.0.1 (an IPv6 option, a `%dev` suffix). */
  host?: string;
}

export interface Outcome {
  option: string;
  argv: string[];
  code: number | null;
  ms: number;
  /** The bound killed the client. */
  hung: boolean;
  /** The last non-empty line it printed (stderr first): the refusal's reason when it failed. */
  last: string;
  /** The plain test after a refusal passed (undefined when none ran). */
  nextOk: boolean | undefined;
}

export interface Table {
  /** Starts our server listening on `port` (tcp). */
  server(port: number): Proc;
  /** The stock client's whole argv for one case against `port`. */
  client(port: number, c: OptionCase): string[];
  /** A plain short test's argv (it must exit 0 against a healthy server). */
  plain(port: number): string[];
  cases: OptionCase[];
  /** Ports a lane's server needs, from its base. */
  portsPerLane?: number;
  /** The port, from a lane's base, that tells the server is listening, and its protocol (tcp unless told). */
  readyOffset?: number;
  readyProto?: "tcp" | "udp";
  /** Free base ports, one per lane. */
  ports(lanes: number): number[];
  lanes: number;
  boundMs: number;
  /** Waits, before each run, until the server can take the next test (an ntttcp -H receiver reopens between tests). */
  settle?(port: number): Promise<void>;
}

function lastLine(f: Finished): string {
  const nonEmpty = (s: string) => s.split("\n").map((l) => l.trim()).filter((l) => l !== "");
  return nonEmpty(f.stderr).at(-1) ?? nonEmpty(f.stdout).at(-1) ?? "";
}

async function timed(argv: string[], boundMs: number): Promise<{ f: Finished; ms: number; hung: boolean }> {
  const t0 = Date.now();
  const f = await spawnProc(argv, boundMs).done;
  const ms = Date.now() - t0;
  return { f, ms, hung: f.code === null || ms >= boundMs };
}

async function lane(t: Table, base: number, cases: OptionCase[]): Promise<{ outcomes: Outcome[]; serverProblems: string[] }> {
  const srv = t.server(base);
  const outcomes: Outcome[] = [];
  const problems: string[] = [];
  const exited = () => srv.done.then(() => true);
  let dead = false;
  void exited().then(() => (dead = true));
  try {
    await waitBound(base + (t.readyOffset ?? 0), t.readyProto ?? "tcp", 20_000);
    for (const c of cases) {
      if (dead) {
        problems.push(`server exited before ${c.option}: ${srv.stderr().trim().split("\n").at(-1)}`);
        break;
      }
      const argv = t.client(base, c);
      await t.settle?.(base);
      const r = await timed(argv, t.boundMs);
      let nextOk: boolean | undefined;
      if (r.f.code !== 0) {
        await t.settle?.(base);
        const p = await timed(t.plain(base), t.boundMs);
        nextOk = p.f.code === 0;
        if (!nextOk) problems.push(`after ${c.option} a plain test failed (exit ${p.f.code}, ${p.ms} ms): ${lastLine(p.f)}`);
      }
      outcomes.push({ option: c.option, argv, code: r.f.code, ms: r.ms, hung: r.hung, last: lastLine(r.f), nextOk });
    }
    await t.settle?.(base);
    const end = await timed(t.plain(base), t.boundMs);
    if (end.f.code !== 0) problems.push(`the lane's closing plain test failed (exit ${end.f.code}): ${lastLine(end.f)}\n${end.f.stdout}`);
  } finally {
    srv.kill();
    await srv.done;
  }
  return { outcomes, serverProblems: problems };
}

/** Runs every case, `lanes` at a time (each lane its own server), and returns the outcomes in the cases' order. */
export async function runTable(t: Table): Promise<{ outcomes: Outcome[]; serverProblems: string[] }> {
  const bases = t.ports(t.lanes);
  const split = bases.map((_, i) => t.cases.filter((_, k) => k % bases.length === i));
  const results = await Promise.all(bases.map((b, i) => lane(t, b, split[i]!)));
  const byOption = new Map(results.flatMap((r) => r.outcomes).map((o) => [o.option, o]));
  return {
    outcomes: t.cases.map((c) => byOption.get(c.option)!).filter((o) => o !== undefined),
    serverProblems: results.flatMap((r) => r.serverProblems),
  };
}

/** One line per outcome, for a failing test's message and for reading which options are applied or refused. */
export const report = (outcomes: Outcome[]): string =>
  outcomes.map((o) => `${o.hung ? "HUNG" : o.code === 0 ? "applied" : `refused(${o.code})`} ${o.ms}ms ${o.option}: ${o.code === 0 ? "" : o.last}`).join("\n");

/**
 * README's option table under `heading` ("#### iperf3 clients ..."): each backticked option of a row's first cell,
 * and whether the row says it is refused (its second cell starts with "refused").
 */
export function readmeTable(heading: string): Map<string, "refused" | "runs"> {
  const text = readFileSync(join(import.meta.dir, "..", "..", "README.md"), "utf8");
  const start = text.indexOf(`\n${heading}`);
  if (start < 0) throw new Error(`README has no "${heading}" section`);
  const rows = new Map<string, "refused" | "runs">();
  let inTable = false;
  for (const line of text.slice(start + 1).split("\n").slice(1)) {
    if (!line.startsWith("|")) {
      if (inTable) break;
      continue;
    }
    inTable = true;
    const [options, verdict] = line.split("|").slice(1, 3).map((c) => c.trim());
    for (const m of (options ?? "").matchAll(/`([^`]+)`/g)) rows.set(m[1]!, verdict!.startsWith("refused") ? "refused" : "runs");
  }
  return rows;
}

/**
 * Where README's table under `heading` and the runs of `t` disagree, after the disagreeing cases ran once more, alone:
 * three lanes of 1 s tests on a loaded 2-core host can starve one run past its peer's own timeouts (and stock
 * 2.1.8's --full-duplex client sometimes aborts on "double free or corruption" whatever the server).
 */
export async function readmeDisagreements(t: Table, outcomes: Outcome[], heading: string): Promise<string[]> {
  const readme = readmeTable(heading);
  const odd = new Set(disagreements(readme, outcomes).map((d) => d.split(": ")[0]!));
  if (odd.size === 0) return [];
  const again = await runTable({ ...t, cases: t.cases.filter((c) => odd.has(c.option)), lanes: 1 });
  console.log(`run again:\n${report(again.outcomes)}`);
  return [...disagreements(readme, again.outcomes), ...again.serverProblems];
}

/**
 * Where the runs and README's table disagree: an option run without a row, or a run refused where its row says it
 * runs (or the other way). Each line names the option and what the run printed.
 */
export function disagreements(table: Map<string, "refused" | "runs">, outcomes: Outcome[]): string[] {
  return outcomes.flatMap((o) => {
    const row = table.get(o.option);
    if (row === undefined) return [`${o.option}: no row in README's table`];
    const got = o.code === 0 ? "runs" : "refused";
    return row === got ? [] : [`${o.option}: README says ${row}, the run ${got === "runs" ? "ran" : `was refused: ${o.last}`}`];
  });
}
