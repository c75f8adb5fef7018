import { allocCounters, HIST_BUCKETS, snapshot, Slot, SLOTS_PER_STREAM, type CounterField, type Snapshot } from "../counters.ts";
import { timeEvent } from "../timed-event.ts";
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
  /** Only the histograms are used (what `time` records); the owner's counters are read at each cut. */
  private readonly buffers;
  /** The latency fields of what `time` recorded, per stream; the owner's own figures are laid over them at a cut. */
  private readonly timed: Float64Array;
  private readonly hists: Uint32Array[];
  private readonly endListeners = new Set<(stream: number, end: StreamEnd) => void>();

  constructor(
    readonly specs: readonly StreamSpec[],
    private readonly read: (stream: number) => PolledCounters,
  ) {
    this.ends = specs.map(() => undefined);
    this.buffers = allocCounters(specs.length);
    this.timed = new Float64Array(specs.length * SLOTS_PER_STREAM);
    this.hists = specs.map((_, i) => new Uint32Array(this.buffers.histograms, i * HIST_BUCKETS * 4, HIST_BUCKETS));
    this.ended = new Promise((r) => (this.allEnded = r));
  }

  /** One timed event of stream `stream` (a datagram's transit), as a Worker's stream times it. */
  time(stream: number, us: number): void {
    timeEvent(this.timed, stream * SLOTS_PER_STREAM, this.hists[stream]!, us);
  }

  copyCounters(): Float64Array {
    const c = this.timed.slice();
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
