/**
 * `anyperf client HOST` against a stock iperf3 server: the native plan as an iperf3 client command, run by the iperf3
 * dialect's own client (compat/iperf3/client.ts), its Test's results as this end and the server's half of the
 * results exchange as `remote`. The dialect's printed report is not shown: anyperf's is.
 */
import { UserError } from "../../src/errors.ts";
import type { TestRun } from "../../src/engine/test-run.ts";
import type { Plan } from "../../src/plan.ts";
import type { Results } from "../../src/report/result.ts";
import { combine } from "../../src/native/client.ts";
import { diagnoseRun } from "../../src/native/diagnose-run.ts";
import type { Direction } from "../../src/native/request.ts";
import type { Results as PeerResults } from "../../interop/iperf3/results.ts";
import { parseIperf3Args } from "../iperf3/args.ts";
import { loadFdTools } from "../iperf3/fd-tools.ts";
import { Output } from "../iperf3/output.ts";
import type { ClientPlan } from "../iperf3/plan.ts";
import { iperf3Remote, iperf3Version } from "./iperf3-remote.ts";
import { parsedFor, refuse } from "./refuse.ts";

export interface PeerTarget {
  host: string;
  port: number;
  direction: Direction;
  linkSpeedBps?: number;
  /** -l was given (not our default write size). */
  lengthGiven?: boolean;
}

/** The iperf3 client command that runs `plan`; what iperf3 cannot carry is refused in one line. */
export function iperf3Argv(plan: Plan, t: PeerTarget): string[] {
  const no = refuse("iperf3");
  if (plan.test !== "stream") no(plan.test === "rr" ? "--rr" : "--crr", "it has no request/response test; use --peer netperf against a netserver");
  if (plan.cooldownS > 0) no("--cooldown", "its client stops the test at -t");
  if (plan.packetsPerSecond > 0) no("-b ...pps", "it paces in bits/s; pass -b in bits/s");
  if (!Number.isInteger(plan.durationS)) no(`-t ${plan.durationS}`, "it counts whole seconds; pass an integer -t");
  if (!Number.isInteger(plan.warmupS)) no(`--warmup ${plan.warmupS}`, "its -O counts whole seconds; pass an integer --warmup");
  if (plan.workers !== undefined) no("--workers", "its streams are spread by this end only");
  const argv = ["-c", t.host, "-p", String(t.port), "-P", String(plan.streams), "-i", String(plan.intervalS), "-J", "--get-server-output"];
  argv.push(...(plan.bytes > 0 ? ["-n", String(plan.bytes)] : ["-t", String(plan.durationS)]));
  if (plan.warmupS > 0) argv.push("-O", String(plan.warmupS));
  if (plan.transport === "udp") argv.push("-u", "-l", String(plan.datagramBytes), "-b", String(plan.bitsPerSecond));
  else argv.push("-l", String(plan.bufferBytes), ...(plan.bitsPerSecond > 0 ? ["-b", String(plan.bitsPerSecond)] : []));
  if (plan.socket.sendBuffer !== undefined) argv.push("-w", String(plan.socket.sendBuffer));
  if (t.direction === "reverse") argv.push("-R");
  if (t.direction === "bidir") argv.push("--bidir");
  return argv;
}

/** The plan as the iperf3 dialect reads it, so its own checks apply (a value it refuses is refused here too). */
export function iperf3ClientPlan(plan: Plan, t: PeerTarget): ClientPlan {
  const argv = iperf3Argv(plan, t);
  const parsed = parsedFor("an iperf3 server", () => parseIperf3Args(argv));
  if (parsed.kind !== "run" || parsed.plan.role !== "client") throw new Error("iperf3 client command did not parse as a client");
  return parsed.plan;
}

/** The error iperf3's -J document carries, when the run failed. */
function documentError(text: string): string | undefined {
  try {
    const doc: unknown = JSON.parse(text);
    const e = doc && typeof doc === "object" ? (doc as Record<string, unknown>).error : undefined;
    return typeof e === "string" ? e : undefined;
  } catch {
    return undefined;
  }
}

export async function runIperf3Peer(plan: Plan, t: PeerTarget, hooks: { signal: AbortSignal; onRun?: (run: TestRun) => void }): Promise<Results> {
  const ip3 = iperf3ClientPlan(plan, t);
  const at = `${t.host.includes(":") ? `[${t.host}]` : t.host}:${t.port}`;
  let printed = "";
  const out = new Output({ write: (text) => (printed += text) });
  let run: TestRun | undefined;
  let peer: PeerResults | undefined;
  const code = await (await import("../iperf3/client.ts")).runClient(ip3, out, await loadFdTools(), hooks.signal, {
    onRun: (r) => {
      run = r;
      hooks.onRun?.(r);
    },
    onPeerResults: (r) => (peer = r),
  });
  const failed = documentError(printed);
  // A server lost mid-test (no results from it, the run done): what this end measured is still printed; the run's
  // errors say why.
  if (!run || (!peer && !hooks.signal.aborted && run.phase !== "done")) throw new UserError(`iperf3 server at ${at}: ${failed ?? (printed.trim().split("\n").at(-1) || `the test failed (exit ${code})`)}`);
  const local = { ...run.results(), mode: "client", peer: at };
  const sends = t.direction !== "reverse";
  const remote = peer ? iperf3Remote(peer, ip3.params, local.phases, iperf3Version(peer)) : undefined;
  const results = combine(failed ? { ...local, errors: [...local.errors, failed] } : local, remote, sends && t.direction !== "bidir");
  const targetBps = plan.bitsPerSecond * plan.streams;
  const diagnosis = await diagnoseRun(results, { server: t.host, localSends: sends, linkSpeedBps: t.linkSpeedBps, targetBps });
  return { ...results, ...(targetBps > 0 ? { target_bps: targetBps } : {}), ...(diagnosis ? { diagnosis } : {}) };
}
