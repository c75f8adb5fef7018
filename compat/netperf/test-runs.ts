import type { StreamCounters } from "../../src/counters.ts";
import type { DataPlane } from "../../src/engine/data-plane.ts";
import { TestRun, type Side, type TestInfo } from "../../src/engine/test-run.ts";

/**
 * One netperf data phase as the engine's Test: `--http` shows it live as it shows every other mode's, and netperf's
 * own figures (interim -D lines, the final counts) are read through the same Test's cuts.
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

/** A data phase being watched: the plane joins when data starts, and the measured window with it. */
export class PhaseRun {
  private readonly run: TestRun;
  private begun = false;
  private ended = false;

  constructor(
    mode: "netperf" | "netserver",
    private readonly role: "client" | "server",
    peer: string,
    private readonly shape: PhaseShape,
    durationS: number,
  ) {
    this.run = new TestRun(
      { mode, role, peer, transport: shape.protocol, test: phaseTest(shape) },
      { warmupS: 0, durationS: Math.max(0, durationS), cooldownS: 0, intervalS: 1 },
    );
  }

  private plane: DataPlane | undefined;

  /** The data phase starts: the plane is attached and counted from here; call before the plane's go(). */
  begin(plane: DataPlane): void {
    if (this.begun || this.ended) return;
    this.begun = true;
    this.plane = plane;
    this.run.attach(plane, phaseSide(this.shape, this.role));
    this.run.beginMeasuring();
  }

  /** The stream's counters since it opened, now (netperf's interim lines). */
  now(): StreamCounters | undefined {
    return this.plane && this.run.cut().get(this.plane)?.streams[0];
  }

  /**
   * The data phase is over (ended, stopped or failed): the window closes and the run is done. Idempotent. Returns
   * the stream's counters since it opened, histogram included, in the cut the window closed on.
   */
  end(): StreamCounters | undefined {
    if (!this.ended) {
      this.ended = true;
      if (this.begun) this.run.endMeasuring();
      this.run.finish();
    }
    return this.plane && this.run.atEnd(this.plane)[0];
  }
}
