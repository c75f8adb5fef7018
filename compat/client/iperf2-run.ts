/**
 * `anyperf client HOST --peer iperf` against an iperf 2 server: the native plan as an iperf 2 client command, run by
 * the iperf 2 dialect's own client (compat/iperf2/client.ts) with its printed report discarded; its Test's results
 * are this end, the UDP server reports the remote end (compat/client/iperf2-remote.ts).
 */
import { UserError } from "../../src/errors.ts";
import type { TestRun } from "../../src/engine/test-run.ts";
import { loadNet } from "../../src/net/net.ts";
import { loadHandOff } from "../../src/net/hand-off.ts";
import type { Plan } from "../../src/plan.ts";
import type { Results } from "../../src/report/result.ts";
import { combine } from "../../src/native/client.ts";
import { diagnoseRun } from "../../src/native/diagnose-run.ts";
import type { ServerReport } from "../../interop/iperf2/server-report.ts";
import { parseIperf2Args } from "../iperf2/args.ts";
import { runClient } from "../iperf2/client.ts";
import type { ClientPlan } from "../iperf2/plan.ts";
import { Printer } from "../iperf2/printer.ts";
import { iperf2Remote } from "./iperf2-remote.ts";
import type { PeerTarget } from "./iperf3-run.ts";
import { parsedFor, refuse } from "./refuse.ts";
import { shortRun } from "./short-run.ts";

/**
 * The largest write a stock iperf 2 server survives sending (-R): 2.1.8 and 2.2.1 segfault at their first write above
 * it (seen from 270,000 bytes up, with their own client too; 262,144 runs).
 */
export const IPERF2_REVERSE_MAX_WRITE = 256 * 1024;
/** iperf 2's own TCP write size, sent in place of our larger default single-stream write when the server writes. */
const IPERF2_DEFAULT_WRITE = 128 * 1024;

/** The server's write size for -R: ours when it survives it; iperf 2's own default in place of our larger default. */
function reverseWrite(bytes: number, t: PeerTarget): number {
  if (t.direction !== "reverse" || bytes <= IPERF2_REVERSE_MAX_WRITE) return bytes;
  if (t.lengthGiven) refuse("iperf")(`-l ${bytes} with -R`, `a stock iperf 2 server (2.1.8, 2.2.1) crashes writing more than ${IPERF2_REVERSE_MAX_WRITE} bytes at once; pass -l 256K or less`);
  return IPERF2_DEFAULT_WRITE;
}

/** The iperf 2 client command that runs `plan`; what iperf 2 cannot carry is refused in one line. */
export function iperf2Argv(plan: Plan, t: PeerTarget): string[] {
  const no = refuse("iperf");
  if (plan.test !== "stream") no(plan.test === "rr" ? "--rr" : "--crr", "anyperf client runs no iperf 2 request/response test; use --peer netperf against a netserver");
  if (t.direction === "bidir") no("--bidir", "its two-way test (--full-duplex) is not driven by anyperf client; run 'anyperf iperf -c HOST --full-duplex'");
  if (plan.warmupS > 0 || plan.cooldownS > 0) no(plan.warmupS > 0 ? "--warmup" : "--cooldown", "its test is one timed phase; drop it");
  if (plan.workers !== undefined) no("--workers", "its streams are spread by this end only");
  // The header carries the time in hundredths of a second (docs/protocols/iperf2.md §2.2).
  if (!Number.isInteger(Math.round(plan.durationS * 1e6) / 1e4)) no(`-t ${plan.durationS}`, "it counts hundredths of a second; pass -t with at most 2 decimals");
  if (plan.bytes > 0 && plan.bytes % plan.streams !== 0) no(`-n ${plan.bytes}`, `its -n counts per stream; pass a multiple of -P ${plan.streams}`);
  if (!Number.isInteger(plan.bitsPerSecond) || !Number.isInteger(plan.packetsPerSecond)) no("-b", "its rate is a whole number of bits/s or packets/s");
  if (plan.intervalS !== 1) no("-i", "its test is cut by anyperf's own 1 s interval clock; drop -i");
  // No -i: its interval clock would open the window at its first tick, before a slow -R connection joined.
  const argv = ["-c", t.host, "-p", String(t.port), "-P", String(plan.streams)];
  argv.push(...(plan.bytes > 0 ? ["-n", String(plan.bytes / plan.streams)] : ["-t", String(plan.durationS)]));
  if (plan.transport === "udp") argv.push("-u", "-l", String(plan.datagramBytes));
  else argv.push("-l", String(reverseWrite(plan.bufferBytes, t)));
  if (plan.packetsPerSecond > 0) argv.push("-b", `${plan.packetsPerSecond}pps`);
  else if (plan.bitsPerSecond > 0) argv.push("-b", String(plan.bitsPerSecond));
  if (plan.socket.sendBuffer !== undefined) argv.push("-w", String(plan.socket.sendBuffer));
  if (t.direction === "reverse") argv.push("-R");
  return argv;
}

/** The plan as the iperf 2 dialect reads it, so its own checks apply (a value it refuses is refused here too). */
export function iperf2ClientPlan(plan: Plan, t: PeerTarget): ClientPlan {
  const argv = iperf2Argv(plan, t);
  const parsed = parsedFor("an iperf server", () => parseIperf2Args(argv));
  if (parsed.kind !== "run" || parsed.plan.role !== "client") throw new Error("iperf 2 client command did not parse as a client");
  return parsed.plan;
}

/** `version`: the server's own, from its ack to the probe, when a probe named it. */
export async function runIperf2Peer(plan: Plan, t: PeerTarget, version: string | undefined, hooks: { signal: AbortSignal; onRun?: (run: TestRun) => void }): Promise<Results> {
  const ip2 = iperf2ClientPlan(plan, t);
  const at = `${t.host.includes(":") ? `[${t.host}]` : t.host}:${t.port}`;
  const [net, handOff] = await Promise.all([loadNet(), loadHandOff()]);
  let run: TestRun | undefined;
  const reports: (ServerReport | undefined)[] = [];
  const warnings: string[] = [];
  const discard = () => {};
  const code = await runClient(ip2, {
    net,
    sockopt: handOff.sockopt,
    handOff,
    // Its own report is not shown (anyperf's is); its warnings (a missing server report) become errors.
    // A stream's id ("[  3] WARNING: ...") names its socket, nothing in anyperf's report.
    printer: new Printer(discard, false, (line) => warnings.push(line.trim().replace(/^\[\s*\d+\]\s*/, ""))),
    signal: hooks.signal,
    warn: (text) => warnings.push(text),
    onRun: (r) => {
      run = r;
      hooks.onRun?.(r);
    },
    onServerReport: (stream, report) => (reports[stream] = report),
  });
  if (!run || code !== 0) throw new UserError(`iperf server at ${at}: ${warnings.at(-1) ?? `the test failed (exit ${code})`}`);
  const local = { ...run.results(), mode: "client", peer: at };
  // A stock server stopped mid-test leaves the dialect's run looking whole: only its length tells (short-run.ts).
  const short = hooks.signal.aborted ? undefined : shortRun(`iperf server at ${at}`, plan, { seconds: local.phases.measured_s, bytes: local.summary.bytes });
  if (short) warnings.push(short);
  const sends = t.direction !== "reverse";
  const awaited = sends && plan.transport === "udp" ? plan.streams : 0;
  const remote = iperf2Remote(reports, awaited, local.phases, version);
  const results = combine({ ...local, errors: [...local.errors, ...warnings] }, remote, sends);
  const targetBps = plan.bitsPerSecond * plan.streams;
  const diagnosis = await diagnoseRun(results, { server: t.host, localSends: sends, linkSpeedBps: t.linkSpeedBps, targetBps });
  return { ...results, ...(targetBps > 0 ? { target_bps: targetBps } : {}), ...(diagnosis ? { diagnosis } : {}) };
}
