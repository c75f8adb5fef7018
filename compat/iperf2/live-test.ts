import type { Snapshot } from "../../src/counters.ts";
import type { MeasuredPlane } from "../../src/engine/measured-plane.ts";
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
 * One iperf 2 test as the engine's Test: the status endpoint (--http) shows it, and the iperf 2 reports read their
 * counters through its cuts (with -i, its interval cuts: one cut for the printed interval and /status). A TestRun's measured window is snapshotted over the planes attached when it begins, so it
 * begins once the test's expected planes are all there (stock clients open all -P connections before sending), or
 * when the first stream ends (a peer that never opened them all); a plane arriving later is left out of the window.
 */
export class LiveTest {
  private readonly run: TestRun;
  private attached = 0;
  private originMs: number | undefined;
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

  /** The reports print intervals (-i) and cut them with interval(): the Test keeps no clock of its own. */
  cutsIntervals(): void {
    this.run.cutsIntervals();
  }

  /** Every attached plane's counters now. */
  cut(): Map<MeasuredPlane, Snapshot> {
    return this.run.cut();
  }

  /** An interval of the reports ends now: one cut, shared with the status endpoint. */
  interval(): Map<MeasuredPlane, Snapshot> {
    return this.run.interval();
  }

  /** `plane`'s counters in `cut`; a plane the Test does not hold (arrived after its window began) is read on its own. */
  static of(cut: Map<MeasuredPlane, Snapshot>, plane: MeasuredPlane): Snapshot {
    return cut.get(plane) ?? plane.snapshot();
  }

  /** `startMs`: when the stream's connection was accepted or made, where iperf 2's clock and counts start. */
  attach(plane: MeasuredPlane, side: Side, startMs?: number): void {
    if (this.measuring || this.ended) return;
    this.originMs ??= startMs;
    this.run.attach(plane, side);
    if (++this.attached >= this.expectedPlanes) this.begin();
  }

  /** Data flows on what is attached (idempotent); the window counts from the first stream's start, as iperf 2 does. */
  begin(): void {
    if (this.measuring || this.ended) return;
    this.measuring = true;
    this.run.beginMeasuring(this.originMs ?? performance.now(), true);
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
