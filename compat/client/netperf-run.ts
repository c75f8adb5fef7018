/**
 * `anyperf client HOST --peer netperf` against a stock netserver: the native plan as one netperf test (TCP_STREAM,
 * TCP_MAERTS for -R, TCP_RR for --rr, TCP_CRR for --crr, UDP_STREAM, UDP_RR), run by the netperf dialect's client
 * (compat/netperf/client.ts); its data phase's Test is this end, the netserver's results message the remote end.
 */
import { UserError } from "../../src/errors.ts";
import type { TestRun } from "../../src/engine/test-run.ts";
import { loadNet } from "../../src/net/net.ts";
import type { Plan } from "../../src/plan.ts";
import type { Results } from "../../src/report/result.ts";
import { combine } from "../../src/native/client.ts";
import { diagnoseRun } from "../../src/native/diagnose-run.ts";
import { parseNetperfArgs } from "../netperf/netperf-args.ts";
import { runInstance } from "../netperf/client.ts";
import { netperfRemote, netperfTest } from "./netperf-remote.ts";
import type { PeerTarget } from "./iperf3-run.ts";
import { refuse } from "./refuse.ts";

/** The netperf command that runs `plan`; what one netperf test cannot carry is refused in one line. */
export function netperfArgv(plan: Plan, t: PeerTarget): string[] {
  const no = refuse("netperf");
  if (plan.streams > 1) no(`-P ${plan.streams}`, "one netperf test is one connection; pass -P 1 (or run 'anyperf netperf --instances N')");
  if (t.direction === "bidir") no("--bidir", "its tests go one way; pass -R for TCP_MAERTS or neither for TCP_STREAM");
  if (t.direction === "reverse" && plan.test !== "stream") no("-R", "its request/response tests are the same both ways; drop -R");
  if (t.direction === "reverse" && plan.transport === "udp") no("-R -u", "netperf has no UDP_MAERTS; drop -R");
  if (plan.bytes > 0) no("-n", "its tests run by time; pass -t");
  if (plan.bitsPerSecond > 0 || plan.packetsPerSecond > 0) no("-b", "it does not pace its sends; drop -b");
  if (plan.warmupS > 0 || plan.cooldownS > 0) no(plan.warmupS > 0 ? "--warmup" : "--cooldown", "its test is one timed phase; drop it");
  if (plan.intervalS !== 1) no("-i", "its interval is anyperf's 1 s one; drop -i");
  if (!Number.isInteger(plan.durationS)) no(`-t ${plan.durationS}`, "its -l counts whole seconds; pass an integer -t");
  const test = netperfTest(plan, t.direction);
  const argv = ["-H", t.host, "-p", String(t.port), "-t", test, "-l", String(plan.durationS), "-c", "-C", "--"];
  if (plan.test !== "stream") argv.push("-r", `${plan.requestBytes},${plan.responseBytes}`);
  else {
    // -m LOCAL or -m ,REMOTE: the sending end's write size, the netserver's for TCP_MAERTS.
    const size = String(plan.transport === "udp" ? plan.datagramBytes : plan.bufferBytes);
    argv.push("-m", t.direction === "forward" ? size : `,${size}`);
  }
  if (plan.socket.sendBuffer !== undefined) argv.push("-s", String(plan.socket.sendBuffer), "-S", String(plan.socket.sendBuffer));
  return argv;
}

export async function runNetperfPeer(plan: Plan, t: PeerTarget, hooks: { signal: AbortSignal; onRun?: (run: TestRun) => void }): Promise<Results> {
  const cmd = parseNetperfArgs(netperfArgv(plan, t));
  if (cmd.kind !== "run") throw new Error(`netperf command parsed as ${cmd.kind}`);
  const at = `${t.host.includes(":") ? `[${t.host}]` : t.host}:${t.port}`;
  let printed = "";
  let run: TestRun | undefined;
  const r = await runInstance(cmd.plan, {
    net: await loadNet(),
    out: (text) => (printed += text),
    err: (text) => (printed += text),
    signal: hooks.signal,
    onRun: (x) => {
      run = x;
      hooks.onRun?.(x);
    },
  });
  if (!run || (!r.remote && !hooks.signal.aborted)) throw new UserError(`netserver at ${at}: ${(r.stderr || printed).trim().split("\n").at(-1) || `the test failed (exit ${r.exitCode})`}`);
  const local = { ...run.results(), mode: "client", peer: at };
  const sends = plan.test !== "stream" || t.direction === "forward";
  const remote = r.remote ? netperfRemote(r.remote, plan, t.direction, local.phases) : undefined;
  const results = combine(local, remote, plan.test === "stream" && t.direction === "forward");
  const diagnosis = await diagnoseRun(results, { server: t.host, localSends: sends, linkSpeedBps: t.linkSpeedBps });
  return diagnosis ? { ...results, diagnosis } : results;
}
