/**
 * `anyperf client HOST --peer ntttcp` against an ntttcp receiver (ntttcp-for-linux's `ntttcp -r`, or ours): the
 * native plan as an ntttcp-for-linux sender command in sync mode, run by the ntttcp dialect's own sender
 * (compat/ntttcp/run.ts) with its console lines discarded. Its Test's results are this end. The receiver reports
 * nothing of its end to the sender (the sync channel carries only the handshake, docs/protocols/ntttcp-linux.md
 * §4.2), so the RemoteEnd names the peer and leaves every figure absent.
 */
import { availableParallelism } from "node:os";
import { UserError } from "../../src/errors.ts";
import type { TestRun } from "../../src/engine/test-run.ts";
import { loadNet } from "../../src/net/net.ts";
import type { Plan } from "../../src/plan.ts";
import type { Results } from "../../src/report/result.ts";
import { combine } from "../../src/native/client.ts";
import { diagnoseRun } from "../../src/native/diagnose-run.ts";
import { parseCommand } from "../ntttcp/parse.ts";
import type { NtttcpPlan } from "../ntttcp/plan.ts";
import { runSender } from "../ntttcp/run.ts";
import type { PeerTarget } from "./iperf3-run.ts";
import { parsedFor, refuse } from "./refuse.ts";

/**
 * The ntttcp-for-linux sender command that runs `plan`: its -P streams as threads on the receiver's base port (every
 * receiver listens there, whatever its own -P). What an ntttcp sender cannot carry is refused in one line.
 */
export function ntttcpArgv(plan: Plan, t: PeerTarget): string[] {
  const no = refuse("ntttcp");
  if (plan.test !== "stream") no(plan.test === "rr" ? "--rr" : "--crr", "it only sends bulk data; use --peer netperf against a netserver");
  if (t.direction !== "forward") no(t.direction === "reverse" ? "-R" : "--bidir", "its sender always sends to the receiver; start the sender on the other host");
  if (plan.bytes > 0) no("-n", "its sender runs by time; pass -t");
  if (plan.packetsPerSecond > 0) no("-b ...pps", "it caps bits/s (-B); pass -b in bits/s");
  if (plan.socket.sendBuffer !== undefined) no("-w", "ntttcp-for-linux sets no socket buffer size; drop -w");
  if (plan.workers !== undefined) no("--workers", "its streams are spread by this end only");
  if (plan.intervalS !== 1) no("-i", "its test is cut every 0.5 s, as ntttcp's real-time lines; drop -i");
  for (const [flag, s] of [["-t", plan.durationS], ["--warmup", plan.warmupS], ["--cooldown", plan.cooldownS]] as const) {
    if (!Number.isInteger(s)) no(`${flag} ${s}`, "it counts whole seconds; pass an integer");
  }
  if (!Number.isInteger(plan.bitsPerSecond)) no("-b", "its cap is a whole number of bits/s");
  const argv = ["--linux", `-s${t.host}`, "-p", String(t.port), "-P", "1", "-n", String(plan.streams), "-t", String(plan.durationS), "-Q"];
  if (t.host.includes(":")) argv.push("-6");
  if (plan.warmupS > 0) argv.push("-W", String(plan.warmupS));
  if (plan.cooldownS > 0) argv.push("-C", String(plan.cooldownS));
  argv.push("-b", String(plan.transport === "udp" ? plan.datagramBytes : plan.bufferBytes));
  if (plan.transport === "udp") argv.push("-u");
  if (plan.bitsPerSecond > 0) argv.push("-B", String(plan.bitsPerSecond));
  return argv;
}

/** The plan as the ntttcp dialect reads it, so its own checks apply (a value it refuses is refused here too). */
export function ntttcpSenderPlan(plan: Plan, t: PeerTarget): NtttcpPlan {
  const argv = ntttcpArgv(plan, t);
  const parsed = parsedFor("an ntttcp receiver", () => parseCommand(argv, { cpus: availableParallelism(), argv0: "ntttcp" }));
  if (parsed.kind !== "run" || parsed.plan.role !== "sender") throw new Error("ntttcp sender command did not parse as a sender");
  return parsed.plan;
}

export async function runNtttcpPeer(plan: Plan, t: PeerTarget, hooks: { signal: AbortSignal; onRun?: (run: TestRun) => void }): Promise<Results> {
  const p = ntttcpSenderPlan(plan, t);
  const at = `${t.host.includes(":") ? `[${t.host}]` : t.host}:${t.port}`;
  let run: TestRun | undefined;
  const errors: string[] = [];
  await runSender(p, {
    net: await loadNet(),
    signal: hooks.signal,
    // Its console is not shown (anyperf's report is); its error lines are kept for a failure's one line.
    log: (level, text) => level === "ERR" && errors.push(text),
    computerName: "",
    os: "",
    onRun: (r) => {
      run = r;
      hooks.onRun?.(r);
    },
  }).catch((e: unknown) => {
    throw e instanceof UserError ? new UserError(`ntttcp receiver at ${at}: ${e.message}`, e.exitCode === 2 ? 2 : 1, e.code) : e;
  });
  if (!run) throw new UserError(`ntttcp receiver at ${at}: ${errors.at(-1) ?? "the test did not start"}`);
  const local = { ...run.results(), mode: "client", peer: at };
  const remote = { role: "server", peer: { name: "ntttcp" as const }, phases: local.phases, totals: {}, streams: [], cpu: {}, errors: [] };
  const results = combine({ ...local, errors: [...local.errors, ...errors] }, remote, true);
  const targetBps = plan.bitsPerSecond * plan.streams;
  const diagnosis = await diagnoseRun(results, { server: t.host, localSends: true, linkSpeedBps: t.linkSpeedBps, targetBps });
  return { ...results, ...(targetBps > 0 ? { target_bps: targetBps } : {}), ...(diagnosis ? { diagnosis } : {}) };
}
