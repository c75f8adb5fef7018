import { UserError } from "../errors.ts";
import type { Results } from "../report/result.ts";
import { jsonDocument } from "../report/json-numbers.ts";
import type { TestRun } from "../engine/test-run.ts";
import { interruptedExitCode, shutdownSignal } from "../signals.ts";
import { measureRun, printRun } from "../native/run-report.ts";
import type { PushTargets } from "../fleet/push.ts";
import { aggregate, headlineOf, primaryKey } from "./headline.ts";
import { gridPoints, pointArgs, pointLabel, type ProcedureOptions } from "./options.ts";
import { appendHistory, checkHistoryPath, HISTORY_VERSION, newId } from "./history.ts";
import { runDetail } from "./run-detail.ts";
import { readHostFacts, type HostFacts } from "./host-facts.ts";
import { bestPoint, repeatText, sweepTable, type PointOutcome } from "./report.ts";

type RunFn = (hooks: { signal: AbortSignal; onRun: (r: TestRun) => void }) => Promise<Results>;

export interface ProcedureCommand {
  mode: string;
  /** The peer's address as the user gave it (loopback: 127.0.0.1 or ::1). */
  peer: string;
  out: { json: boolean; csv?: string } & PushTargets;
  /** The command's argv (a point's flags appended) → its run; throws UserError for a bad value. */
  prepare(argv: string[]): RunFn;
}

/**
 * The host facts each history line carries, read once before the first run; none without --history's file. The
 * default file failing is a warning (the runs still go), the user's own --history FILE failing an error.
 */
export function historyFacts(p: ProcedureOptions, peer: string): HostFacts | undefined {
  if (p.history === undefined) return undefined;
  try {
    checkHistoryPath(p.history);
    return readHostFacts(peer);
  } catch (e) {
    if (p.historyGiven) throw e;
    console.error(`anyperf: history not recorded: ${(e as Error).message}`);
    return undefined;
  }
}

/**
 * --repeat and --sweep around one native command: every point of the grid, each --repeat times, each run recorded in
 * the history; a failed run or Ctrl+C ends the procedure with what was measured so far reported.
 */
export async function runProcedure(p: ProcedureOptions, cmd: ProcedureCommand, onRun?: (r: TestRun) => void): Promise<number> {
  const points = gridPoints(p.sweeps);
  const single = points.length === 1 && p.repeat === 1;
  if (!single && cmd.out.csv !== undefined) throw new UserError("--csv holds one run's intervals: drop it with --repeat/--sweep (the history keeps every run)", 2);
  const push = cmd.out.push !== undefined ? "--push" : cmd.out.pushgateway !== undefined ? "--pushgateway" : undefined;
  if (!single && push !== undefined) throw new UserError(`${push} sends one run's results: drop it with --repeat/--sweep (the history keeps every run)`, 2);
  // Every point's options are checked before the first run, so a bad value does not end a long sweep half-way.
  const runners = points.map((pt) => cmd.prepare([...p.rest, ...pointArgs(pt)]));
  const facts = historyFacts(p, cmd.peer);
  const group = newId();
  const signal = shutdownSignal();
  const done: PointOutcome[] = [];
  let failure: string | undefined;
  for (const [i, pt] of points.entries()) {
    const runs: Results[] = [];
    for (let n = 1; n <= p.repeat && !signal.aborted && failure === undefined; n++) {
      const where = `${points.length > 1 ? `point ${pointLabel(pt)}, ` : ""}run ${n}`;
      let r: Results;
      try {
        // Several runs end in one table; each run's interval lines would bury it.
        r = await measureRun(runners[i]!, { ...cmd.out, intervalLines: single }, onRun);
      } catch (e) {
        // A refusal or lost peer after some runs ends the procedure, and what was measured is still reported.
        if (!(e instanceof UserError) || (done.length === 0 && runs.length === 0)) throw e;
        failure = `${where} failed: ${e.message}`;
        break;
      }
      runs.push(r);
      if (facts !== undefined && p.history !== undefined) {
        appendHistory(p.history, {
          v: HISTORY_VERSION, id: newId(), time: r.started_at, argv: [...p.rest, ...pointArgs(pt)], mode: cmd.mode, peer: cmd.peer,
          transport: r.transport, test: r.test, group, point: pt, repeat: n, host: facts, results: headlineOf(r), summary: r.summary,
          detail: runDetail(r), interrupted: r.interrupted, errors: r.errors,
        });
      }
      if (r.errors.length > 0) failure = `${where} failed: ${r.errors[0]}`;
    }
    // A failed or interrupted run is listed but not averaged: its figures measure the failure, not the point.
    if (runs.length > 0) done.push({ point: pt, runs, aggregate: aggregate(runs.filter((r) => r.errors.length === 0 && !r.interrupted).map(headlineOf)) });
    if (signal.aborted || failure !== undefined) break;
  }
  if (single) return done[0] ? printRun(done[0].runs[0]!, cmd.out) : (interruptedExitCode(signal) ?? 1);
  const primary = primaryKey(done[0]?.runs[0]?.test ?? "stream");
  const best = bestPoint(done, primary);
  if (cmd.out.json) {
    const doc = p.sweeps.length === 0 ? { runs: done[0]?.runs ?? [], aggregate: done[0]?.aggregate ?? {} } : { points: done, best: done[best]?.point ?? null };
    console.log(jsonDocument({ ...doc, ...(failure ? { stopped: failure } : {}) }));
  } else if (p.sweeps.length === 0) {
    console.log(repeatText(done[0]?.runs ?? [], done[0]?.aggregate ?? {}));
  } else console.log(sweepTable(done, primary, best));
  if (failure !== undefined) console.error(`anyperf: stopped early: ${failure}; the table holds the points before it`);
  return interruptedExitCode(signal) ?? (failure !== undefined ? 1 : 0);
}
