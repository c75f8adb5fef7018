/**
 * iperf3's test clock, one for both ends: from TEST_START it cuts the Test's intervals on iperf3's grid (-i), ends
 * the omit period (-O, the Test's warm-up) on time, restarting the grid and the byte counts there, and calls the
 * side's end at TEST_START + omit + time. The client starts it when TEST_START arrives, the server when it sends it.
 */
import type { TestRun } from "../../src/engine/test-run.ts";
import type { TestParams } from "../../interop/iperf3/params.ts";
import { StreamSampler, type LiveStream } from "./sampler.ts";
import { atTime, everyInterval, type GridTimer } from "./timers.ts";

export interface ClockOptions {
  run: TestRun;
  streams: LiveStream[];
  params: TestParams;
  /** -i: seconds between printed intervals; 0 prints none (the Test then keeps its own clock for /status). */
  intervalS: number;
  /** TEST_START, where times and counts begin (performance.now() clock). */
  t0Ms: number;
  /** Prints the intervals sampled so far. */
  flush(): void;
  /** An interval is due: true when the side ended the test instead (the client, at a boundary on its end). */
  beforeInterval?(nowMs: number): boolean;
  /** At TEST_START + omit + time (a timed test only): the side's end. */
  atEnd?(): void;
}

export class TestClock {
  readonly sampler: StreamSampler;
  /** When a timed test ends on this clock; undefined for -n / -k. */
  readonly endDueMs: number | undefined;
  private grid: GridTimer | undefined;
  private readonly timers: Array<{ stop(): void }> = [];

  constructor(private readonly o: ClockOptions) {
    const { run, params: p, t0Ms } = o;
    // With -i the intervals are cut on iperf3's clock, once, for its reports and /status alike.
    if (o.intervalS > 0) run.cutsIntervals();
    this.sampler = new StreamSampler(o.streams, p.protocol === "udp", run);
    // iperf3's omitted seconds are the engine's warm-up: counted apart, left out of the measured window. Streams count
    // from their first byte (no handshake datagram is counted).
    if (p.omitS === 0) run.beginMeasuring(t0Ms, true);
    else run.beginWarmup(t0Ms, true);
    this.sampler.start(t0Ms, p.omitS);
    this.startGrid(t0Ms);
    if (p.omitS > 0) {
      this.timers.push(
        atTime(t0Ms + p.omitS * 1000, () => {
          const omitEnd = performance.now();
          this.sampler.omitEnd(omitEnd);
          run.beginMeasuring(omitEnd);
          o.flush();
          // Interval boundaries restart with the measured part, as 3.12's omit timer does.
          this.startGrid(omitEnd);
        }),
      );
    }
    this.endDueMs = p.timeS > 0 ? t0Ms + (p.omitS + p.timeS) * 1000 : undefined;
    if (this.endDueMs !== undefined && o.atEnd) this.timers.push(atTime(this.endDueMs, o.atEnd));
  }

  private startGrid(fromMs: number): void {
    this.grid?.stop();
    if (this.o.intervalS > 0) this.grid = everyInterval(this.o.intervalS * 1000, () => this.interval(), fromMs);
  }

  private interval(): void {
    const now = performance.now();
    if (this.o.beforeInterval?.(now)) return;
    this.sampler.sample(now);
    this.o.flush();
  }

  /** No more intervals, omit end or end call (the test is ending). */
  stop(): void {
    this.grid?.stop();
    this.grid = undefined;
    for (const t of this.timers) t.stop();
    this.timers.length = 0;
  }
}
