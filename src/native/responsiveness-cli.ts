/**
 * `anyperf client HOST --responsiveness`'s front end: its refusals, progress lines, the text or --json report, and
 * with --repeat N the phases' median and spread over N full runs; each run is one history line (kind responsiveness).
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
import { responsivenessHeadline, responsivenessSpread, responsivenessSpreadText } from "./responsiveness-runs.ts";
import { appendHistory, HISTORY_VERSION, newId } from "../procedure/history.ts";
import { historyFacts } from "../procedure/run-procedure.ts";

export async function responsivenessMain(
  proc: ProcedureOptions,
  opts: { plan: Plan; target: ClientTarget; json: boolean },
  signal: AbortSignal,
  onRun?: (run: TestRun) => void,
): Promise<number> {
  if (proc.sweeps.length > 0) throw new UserError("--sweep does not apply to --responsiveness (its phases are one report; -P sets the load): drop it, or run one -P at a time", 2);
  const { plan, target } = opts;
  const facts = historyFacts(proc, target.host);
  const group = newId();
  const at = target.host.includes(":") ? `[${target.host}]:${target.port}` : `${target.host}:${target.port}`;
  const head = `responsiveness to ${at}: a TCP 1-byte request/response probe, idle then beside ${plan.streams} TCP stream(s) per direction; ${plan.durationS} s per phase after ${plan.warmupS > 0 ? plan.warmupS : LOAD_WARMUP_S} s warm-up`;
  const runs: { started_at: string; interrupted: boolean; responsiveness: Responsiveness }[] = [];
  for (let n = 1; n <= proc.repeat && !signal.aborted; n++) {
    const startedAt = new Date().toISOString();
    const r = await runResponsiveness(plan, target, {
      signal,
      onRun,
      onPhase: (name, p) => {
        if (!opts.json) console.error(`${proc.repeat > 1 ? `run ${n}: ` : ""}${name}: probe p50 ${formatMicroseconds(p.latency_us.p50)}${name === "idle" ? "" : `, load ${formatBits(p.throughput_bps)}`}`);
      },
    });
    runs.push({ started_at: startedAt, interrupted: signal.aborted, responsiveness: r });
    if (facts !== undefined && proc.history !== undefined) {
      appendHistory(proc.history, {
        v: HISTORY_VERSION, id: newId(), time: startedAt, argv: proc.rest, mode: "client", peer: target.host, transport: "tcp", test: "responsiveness",
        group, repeat: n, host: facts, results: responsivenessHeadline(r), responsiveness: r, interrupted: signal.aborted,
      });
    }
  }
  const meta = { tool: "anyperf", version: VERSION, mode: "client", peer: at, started_at: runs[0]?.started_at, interrupted: signal.aborted };
  if (proc.repeat === 1) {
    const r = runs[0]!.responsiveness;
    if (opts.json) console.log(jsonDocument({ ...meta, responsiveness: r }));
    else console.log(responsivenessText(r, `${head}${signal.aborted ? " — interrupted, partial results" : ""}`));
    return interruptedExitCode(signal) ?? 0;
  }
  // An interrupted run is listed but not counted: its missing phases would skew the others' spread.
  const counted = runs.filter((r) => !r.interrupted).map((r) => r.responsiveness);
  const spread = responsivenessSpread(counted);
  if (opts.json) console.log(jsonDocument({ ...meta, runs, aggregate: spread }));
  else console.log(`${head}\n${responsivenessSpreadText(runs.length, counted.length, spread)}`);
  return interruptedExitCode(signal) ?? 0;
}
