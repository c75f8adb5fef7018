import type { StreamCounters } from "../../src/counters.ts";
import type { DataPlane } from "../../src/engine/data-plane.ts";
import type { MeasuredPlane } from "../../src/engine/measured-plane.ts";
import { TestRun, type Side, type TestInfo } from "../../src/engine/test-run.ts";
import type { HostWindow } from "../../src/host/window.ts";
import type { SocketBufferSizes } from "../../src/worker/messages.ts";
import type { InstancesWindow } from "./common-window.ts";
import { cpuStats } from "./cpu-stats.ts";
import type { CpuStats } from "./figures.ts";
import type { NetperfPlan } from "./plan.ts";

/**
 * One netperf data phase as the engine's Test: `--http` shows it live as it shows every other mode's, and netperf's
 * own figures (interim -D lines, the final counts, the elapsed time and the CPU) are read through the same Test.
 */

/** Which way a data phase moves bytes, seen from one side: who sends, who receives, a connection per transaction. */
export interface PhaseShape {
  protocol: "tcp" | "udp";
  sends: boolean;
  receives: boolean;
  connectPerTransaction: boolean;
}

/** The status kind of a phase: sending and receiving is request/response; with a connection each, CRR. */
export function phaseTest(s: PhaseShape): TestInfo["test"] {
  if (s.sends && s.receives) return s.connectPerTransaction ? "crr" : "rr";
  return "stream";
}

/** The plane's side in the TestRun: "send"/"recv" for streams, "client"/"server" for request/response. */
export function phaseSide(s: PhaseShape, role: "client" | "server"): Side {
  if (phaseTest(s) !== "stream") return role;
  return s.receives ? "recv" : "send";
}

/** The peer as the status endpoint shows it: host:port, [v6]:port; a v4-mapped address (dual-stack listener) as v4. */
export function peerName(address: string, port: number): string {
  const host = address.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, "");
  return host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
}

/**
 * A data phase as a Test: its one plane opens the window when it attaches (call attach() before the plane's go()),
 * counted from the data connection's open, as netperf counts; end() closes it.
 */
export function phaseRun(mode: "netperf" | "netserver", role: "client" | "server", peer: string, shape: PhaseShape, durationS: number): TestRun {
  return new TestRun(
    { mode, role, peer, transport: shape.protocol, test: phaseTest(shape) },
    { warmupS: 0, durationS: Math.max(0, durationS), cooldownS: 0, intervalS: 1 },
    { expectedPlanes: 1, fromOpen: true },
  );
}

/** What netperf reads of a data phase: the stream's counts since it opened, the elapsed time and its own CPU. */
export interface PhaseEnd {
  counters: StreamCounters;
  elapsedS: number;
  /** netperf's local CPU figures (-c), from the host over the window. */
  localCpu: CpuStats | undefined;
  /** SO_SNDBUF/SO_RCVBUF of the data socket as the phase ended (autotuning grows them): netperf's *_SIZE_END. */
  buffers: SocketBufferSizes | undefined;
}

/** The data phase is over (ended, stopped or failed): the Test's window closes (idempotent) and gives its figures. */
export function endPhase(run: TestRun, plane: MeasuredPlane | undefined): { counters: StreamCounters; elapsedS: number; host: HostWindow | undefined } | undefined {
  run.end();
  const w = run.measured();
  const counters = plane && w.stream(plane, 0);
  return counters && { counters, elapsedS: w.seconds, host: w.host };
}

/** The stream's counts since it opened, now (netperf's interim -D lines). */
export function phaseSoFar(run: TestRun, plane: MeasuredPlane): StreamCounters | undefined {
  return run.since(run.originAt(0)).stream(plane, 0);
}

/**
 * netperf's one timed data phase, omni's and the classic tests' alike: `plane` (connected at `openedAtMs`, not
 * started) joins its Test, whose window counts from the connection, as netperf's clock does (a netserver sending, as
 * in TCP_MAERTS, starts at its accept; a Worker still starting up, 100-400 ms on a busy host, is not part of the
 * time), and opens before the -l timer starts, so the elapsed time is never shorter than -l; the streams then run
 * until the timer, their own count (-l -N), a signal (netperf takes SIGINT as "time is up") or the caller stops the
 * plane.
 * `whileRunning` starts with the streams (omni's -D interim lines) and its returned function runs once they ended.
 */
export async function runDataPhase(
  plane: DataPlane,
  o: { plan: NetperfPlan; signal: AbortSignal; peer: string; shape: PhaseShape; openedAtMs: number; common?: InstancesWindow },
  whileRunning?: (run: TestRun) => () => void,
): Promise<PhaseEnd> {
  const run = phaseRun("netperf", "client", o.peer, o.shape, o.plan.testLength);
  run.attach(plane, phaseSide(o.shape, "client"), o.openedAtMs);
  o.common?.joinPhase(run, plane);
  const stop = () => void plane.stop();
  const timer = o.plan.testLength > 0 ? setTimeout(stop, o.plan.testLength * 1000) : undefined;
  o.signal.addEventListener("abort", stop, { once: true });
  plane.go();
  // Ctrl+C before the data phase began still ends it (the listener only hears later signals).
  if (o.signal.aborted) stop();
  const ended = whileRunning?.(run);
  await plane.ended;
  o.common?.leave();
  // The counts, the elapsed time and the CPU are the Test's window: what /status and /results show too.
  const phase = endPhase(run, plane)!;
  clearTimeout(timer);
  o.signal.removeEventListener("abort", stop);
  ended?.();
  return { counters: phase.counters, elapsedS: phase.elapsedS, localCpu: o.plan.localCpu ? cpuStats(phase.host) : undefined, buffers: plane.socketBuffers(0) };
}
