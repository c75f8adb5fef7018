/** `anyperf client HOST --responsiveness`'s front end: its refusals, progress lines, and the text or --json report. */
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
import { responsivenessText } from "./responsiveness-report.ts";

export async function responsivenessMain(
  proc: ProcedureOptions,
  opts: { plan: Plan; target: ClientTarget; json: boolean },
  signal: AbortSignal,
  onRun?: (run: TestRun) => void,
): Promise<number> {
  const flag = proc.repeat > 1 ? "--repeat" : proc.sweeps.length > 0 ? "--sweep" : proc.historyGiven ? "--history" : undefined;
  if (flag) throw new UserError(`${flag} does not apply to --responsiveness yet (its phases are one report): drop it`, 2);
  const startedAt = new Date().toISOString();
  const { plan, target } = opts;
  const r = await runResponsiveness(plan, target, {
    signal,
    onRun,
    onPhase: (name, p) => {
      if (!opts.json) console.error(`${name}: probe p50 ${formatMicroseconds(p.latency_us.p50)}${name === "idle" ? "" : `, load ${formatBits(p.throughput_bps)}`}`);
    },
  });
  const at = target.host.includes(":") ? `[${target.host}]:${target.port}` : `${target.host}:${target.port}`;
  if (opts.json) console.log(jsonDocument({ tool: "anyperf", version: VERSION, mode: "client", peer: at, started_at: startedAt, interrupted: signal.aborted, responsiveness: r }));
  else {
    const head = `responsiveness to ${at}: a TCP 1-byte request/response probe, idle then beside ${plan.streams} TCP stream(s) per direction; ${plan.durationS} s per phase after ${plan.warmupS > 0 ? plan.warmupS : LOAD_WARMUP_S} s warm-up${signal.aborted ? " — interrupted, partial results" : ""}`;
    console.log(responsivenessText(r, head));
  }
  return interruptedExitCode(signal) ?? 0;
}
