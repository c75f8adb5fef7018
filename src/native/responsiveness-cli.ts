/**
 * `anyperf client HOST --responsiveness`'s front end: its progress lines, the text or --json report, and
 * with --repeat N the phases' median and spread over N full runs, with --sweep one row per point (each point's runs the
 * whole sequence with its -P, -l, -w or -b); each run is one history line (kind responsiveness).
 */
import { UserError } from "../errors.ts";
import type { TestRun } from "../engine/test-run.ts";
import { jsonDocument } from "../report/json-numbers.ts";
import { formatMicroseconds } from "../report/text.ts";
import type { ProcedureOptions } from "../procedure/options.ts";
import { interruptedExitCode } from "../signals.ts";
import { formatBits } from "../units.ts";
import { VERSION } from "../version.ts";
import type { Plan } from "../plan.ts";
import type { ClientTarget } from "./client.ts";
import { LOAD_WARMUP_S, runResponsiveness } from "./responsiveness.ts";
import { responsivenessText, type Responsiveness } from "./responsiveness-report.ts";
import { bestResponsivePoint, responsivenessHeadline, responsivenessSpread, responsivenessSpreadText, responsivenessSweepTable, type ResponsivenessPoint } from "./responsiveness-runs.ts";
import { gridPoints, pointArgs, pointLabel } from "../procedure/options.ts";
import { appendHistory, HISTORY_VERSION, newId } from "../procedure/history.ts";
import { historyFacts } from "../procedure/run-procedure.ts";

export async function responsivenessMain(
  proc: ProcedureOptions,
  opts: { plan: Plan; target: ClientTarget; json: boolean },
  signal: AbortSignal,
  /** A point's argv (the user's, its --sweep flags after) → its plan; throws UserError for a bad value. */
  planAt: (argv: string[]) => Plan,
  onRun?: (run: TestRun) => void,
): Promise<number> {
  const { target } = opts;
  const points = gridPoints(proc.sweeps);
  // Every point's flags are checked before the first run, so a bad value does not end a long sweep half-way.
  const plans = points.map((pt) => (proc.sweeps.length ? planAt([...proc.rest, ...pointArgs(pt)]) : opts.plan));
  const facts = historyFacts(proc, target.host);
  const group = newId();
  const at = target.host.includes(":") ? `[${target.host}]:${target.port}` : `${target.host}:${target.port}`;
  const plan = plans[0]!;
  const head = `responsiveness to ${at}: a TCP 1-byte request/response probe and UDP pings, idle then beside ${proc.sweeps.some((s) => s.key === "streams") ? "each point's -P" : plan.streams} TCP stream(s) per direction; ${plan.durationS} s per phase after ${plan.warmupS > 0 ? plan.warmupS : LOAD_WARMUP_S} s warm-up`;
  const done: ResponsivenessPoint[] = [];
  let failure: string | undefined;
  for (const [i, pt] of points.entries()) {
    const runs: ResponsivenessPoint["runs"] = [];
    for (let n = 1; n <= proc.repeat && !signal.aborted; n++) {
      const where = [points.length > 1 ? `point ${pointLabel(pt)}` : "", proc.repeat > 1 ? `run ${n}` : ""].filter(Boolean).join(", ");
      const startedAt = new Date().toISOString();
      let r: Responsiveness;
      try {
        r = await runResponsiveness(plans[i]!, target, {
          signal,
          onRun,
          onPhase: (name, p) => {
            if (!opts.json) console.error(`${where ? `${where}: ` : ""}${name}: probe p50 ${formatMicroseconds(p.latency_us.p50)}${name === "idle" ? "" : `, load ${formatBits(p.throughput_bps)}`}`);
          },
        });
      } catch (e) {
        // A lost server after some points ends the sweep, and what was measured is still reported.
        if (!(e instanceof UserError) || proc.sweeps.length === 0 || (done.length === 0 && runs.length === 0)) throw e;
        failure = `${where} failed: ${e.message}`;
        break;
      }
      runs.push({ started_at: startedAt, interrupted: signal.aborted, responsiveness: r });
      if (facts !== undefined && proc.history !== undefined) {
        appendHistory(proc.history, {
          v: HISTORY_VERSION, id: newId(), time: startedAt, argv: [...proc.rest, ...pointArgs(pt)], mode: "client", peer: target.host, transport: "tcp", test: "responsiveness",
          group, point: pt, repeat: n, host: facts, results: responsivenessHeadline(r), responsiveness: r, interrupted: signal.aborted,
        });
      }
    }
    // An interrupted run is listed but not counted: its missing phases would skew the others' spread.
    if (runs.length > 0) done.push({ point: pt, runs, aggregate: responsivenessSpread(runs.filter((r) => !r.interrupted).map((r) => r.responsiveness)) });
    if (signal.aborted || failure !== undefined) break;
  }
  const meta = { tool: "anyperf", version: VERSION, mode: "client", peer: at, started_at: done[0]?.runs[0]?.started_at, interrupted: signal.aborted };
  const exit = interruptedExitCode(signal) ?? (failure !== undefined ? 1 : 0);
  if (proc.sweeps.length > 0) {
    const best = bestResponsivePoint(done);
    if (opts.json) console.log(jsonDocument({ ...meta, points: done, best: done[best]?.point ?? null, ...(failure ? { stopped: failure } : {}) }));
    else console.log(`${head}\n${responsivenessSweepTable(done, best)}`);
    if (failure !== undefined) console.error(`anyperf: stopped early: ${failure}; the table holds the points before it`);
    return exit;
  }
  const runs = done[0]?.runs ?? [];
  if (proc.repeat === 1) {
    const r = runs[0]!.responsiveness;
    if (opts.json) console.log(jsonDocument({ ...meta, responsiveness: r }));
    else console.log(responsivenessText(r, `${head}${signal.aborted ? " — interrupted, partial results" : ""}`));
    return exit;
  }
  const counted = runs.filter((r) => !r.interrupted).length;
  if (opts.json) console.log(jsonDocument({ ...meta, runs, aggregate: done[0]!.aggregate }));
  else console.log(`${head}\n${responsivenessSpreadText(runs.length, counted, done[0]!.aggregate)}`);
  return exit;
}
