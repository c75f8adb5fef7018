import type { Cut } from "../../src/engine/cut.ts";
import type { MeasuredPlane } from "../../src/engine/measured-plane.ts";
import type { TestRun } from "../../src/engine/test-run.ts";

/**
 * `--instances N`: the window in which all N data phases ran at once, cut from each instance's own Test. It opens
 * when the last instance's data phase starts (every Test cut at that instant) and closes when the first one ends
 * (every Test cut again), so its counts are what every instance moved while all of them were running. The sum of
 * each instance's own rate counts an instance that ran alone at its alone rate: with many instances, whose starts
 * spread over seconds, that sum is above anything the instances reached together.
 */
export interface CommonCounts {
  seconds: number;
  transactions: number;
  /** Payload bytes this side's streams moved (sent by a sender, received by a receiver). */
  bytes: number;
}

export class CommonWindow {
  private readonly running = new Map<TestRun, MeasuredPlane>();
  private start: { atMs: number; cuts: Map<TestRun, Cut> } | undefined;
  private closed = false;
  private counts: CommonCounts | undefined;

  constructor(private readonly instances: number) {}

  /** An instance's data phase started (its plane attached to its Test). */
  join(run: TestRun, plane: MeasuredPlane): void {
    if (this.closed || this.start) return;
    this.running.set(run, plane);
    if (this.running.size < this.instances) return;
    const atMs = performance.now();
    this.start = { atMs, cuts: new Map([...this.running.keys()].map((r) => [r, r.cut(false, atMs)])) };
  }

  /** An instance's data phase ended (its plane stopped, its Test not yet ended): the first one closes the window. */
  leave(): void {
    if (this.closed) return;
    this.closed = true;
    if (!this.start) return;
    const atMs = performance.now();
    const counts = { seconds: (atMs - this.start.atMs) / 1000, transactions: 0, bytes: 0 };
    for (const [run, plane] of this.running) {
      const s = run.between(this.start.cuts.get(run)!, run.cut(false, atMs)).stream(plane, 0);
      if (!s) continue;
      counts.transactions += s.transactions;
      counts.bytes += s.bytes;
    }
    this.counts = counts;
  }

  /** What all instances moved together; undefined when one ended (or failed) before the last one started. */
  result(): CommonCounts | undefined {
    return this.counts;
  }
}
