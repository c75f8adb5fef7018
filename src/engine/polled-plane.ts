import { allocCounters, snapshot, Slot, SLOTS_PER_STREAM, type CounterField, type Snapshot } from "../counters.ts";
import type { StreamSpec } from "../stream-spec.ts";
import type { StreamEnd } from "./data-plane.ts";
import type { MeasuredPlane } from "./measured-plane.ts";

/** One stream's cumulative figures as its owner keeps them; fields left out stay 0. */
export type PolledCounters = Partial<Record<CounterField, number>>;

/**
 * Streams counted on the main thread by their owner (a session that already keeps the figures its protocol
 * reports): each cut reads them through `read`, so the TestRun, its /status and /metrics, and the owner's own lines
 * see the same numbers, and the hot path pays nothing between cuts.
 */
export class PolledPlane implements MeasuredPlane {
  readonly ends: (StreamEnd | undefined)[];
  readonly ended: Promise<void>;
  private allEnded!: () => void;
  /** Only the histograms are used (empty: nothing here times transactions); the counters are read at each cut. */
  private readonly buffers;
  private readonly endListeners = new Set<(stream: number, end: StreamEnd) => void>();

  constructor(
    readonly specs: readonly StreamSpec[],
    private readonly read: (stream: number) => PolledCounters,
  ) {
    this.ends = specs.map(() => undefined);
    this.buffers = allocCounters(specs.length);
    this.ended = new Promise((r) => (this.allEnded = r));
  }

  copyCounters(): Float64Array {
    const c = new Float64Array(this.specs.length * SLOTS_PER_STREAM);
    for (let i = 0; i < this.specs.length; i++) {
      for (const [name, value] of Object.entries(this.read(i))) c[i * SLOTS_PER_STREAM + Slot[name as CounterField]] = value;
    }
    return c;
  }

  snapshot(withHistograms = false, counters = this.copyCounters()): Snapshot {
    return snapshot(this.buffers, counters, this.specs.length, performance.now(), withHistograms);
  }

  onStreamEnd(l: (stream: number, end: StreamEnd) => void): () => void {
    this.endListeners.add(l);
    this.ends.forEach((end, stream) => end && l(stream, end));
    return () => this.endListeners.delete(l);
  }

  /** The owner's stream is over (idempotent). */
  end(stream: number, end: StreamEnd = { reason: "stopped" }): void {
    if (this.ends[stream]) return;
    this.ends[stream] = end;
    for (const l of this.endListeners) l(stream, end);
    if (this.ends.every((e) => e !== undefined)) this.allEnded();
  }
}
