import type { StreamCounters } from "../../src/counters.ts";
import type { MeasuredPlane } from "../../src/engine/measured-plane.ts";
import { TestRun, type Side, type TestInfo } from "../../src/engine/test-run.ts";
import type { HostWindow } from "../../src/host/window.ts";

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

/** What netperf reads of a data phase: the stream's counts since it opened, the elapsed time and the host over it. */
export interface PhaseEnd {
  counters: StreamCounters;
  elapsedS: number;
  host: HostWindow | undefined;
}

/** The data phase is over (ended, stopped or failed): the Test's window closes (idempotent) and gives its figures. */
export function endPhase(run: TestRun, plane: MeasuredPlane | undefined): PhaseEnd | undefined {
  run.end();
  const w = run.measured();
  const counters = plane && w.stream(plane, 0);
  return counters && { counters, elapsedS: w.seconds, host: w.host };
}

/** The stream's counts since it opened, now (netperf's interim -D lines). */
export function phaseSoFar(run: TestRun, plane: MeasuredPlane): StreamCounters | undefined {
  return run.since(run.originAt(0)).stream(plane, 0);
}
