import type { DataPlane } from "../../src/engine/data-plane.ts";
import { type Side, TestRun } from "../../src/engine/test-run.ts";

export interface LiveTestInfo {
  role: "server" | "client";
  /** The other end as "host:port" ("[v6]:port"), as the status endpoint shows it. */
  peer: { host: string; port: number };
  transport: "tcp" | "udp";
  /** Requested test time; 0 when the test ends by amount of bytes or by the peer. */
  durationS: number;
  intervalS: number;
}

/**
 * One iperf 2 test as the status endpoint (--http) sees it: a TestRun fed with the test's data planes. The iperf 2
 * reports do not read it. A TestRun's measured window is snapshotted over the planes attached when it begins, so it
 * begins once the test's expected planes are all there (stock clients open all -P connections before sending), or
 * when the first stream ends (a peer that never opened them all); a plane arriving later is left out of the window.
 */
export class LiveTest {
  private readonly run: TestRun;
  private attached = 0;
  private measuring = false;
  private ended = false;

  constructor(
    info: LiveTestInfo,
    private readonly expectedPlanes: number,
  ) {
    const peer = info.peer.host.includes(":") ? `[${info.peer.host}]:${info.peer.port}` : `${info.peer.host}:${info.peer.port}`;
    this.run = new TestRun(
      { mode: "iperf", role: info.role, peer, transport: info.transport, test: "stream" },
      { warmupS: 0, durationS: info.durationS, cooldownS: 0, intervalS: info.intervalS > 0 ? info.intervalS : 1 },
    );
  }

  attach(plane: DataPlane, side: Side): void {
    if (this.measuring || this.ended) return;
    this.run.attach(plane, side);
    if (++this.attached >= this.expectedPlanes) this.begin();
  }

  /** Data flows now on what is attached (idempotent). */
  begin(): void {
    if (this.measuring || this.ended) return;
    this.measuring = true;
    this.run.beginMeasuring();
  }

  /** The test is over: the window closes and the run is done (idempotent). */
  end(): void {
    if (this.ended) return;
    this.begin();
    this.ended = true;
    this.run.endMeasuring();
    this.run.finish();
  }
}
