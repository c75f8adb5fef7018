import { CommonWindow } from "../../src/engine/common-window.ts";
import type { MeasuredPlane } from "../../src/engine/measured-plane.ts";
import type { TestRun } from "../../src/engine/test-run.ts";

/** What all `--instances` moved together (src/engine/common-window.ts): the aggregate over one window. */
export interface CommonCounts {
  seconds: number;
  transactions: number;
  /** Payload bytes this side's streams moved (sent by a sender, received by a receiver). */
  bytes: number;
}

/** `--instances N`: the engine's common window over the N data phases, each Test's one data plane counted. */
export class InstancesWindow extends CommonWindow {
  private readonly planes = new Map<TestRun, MeasuredPlane>();

  /** An instance's data phase started (its plane attached to its Test). */
  joinPhase(run: TestRun, plane: MeasuredPlane): void {
    this.planes.set(run, plane);
    this.join(run);
  }

  /** What all instances moved together; undefined when one ended (or failed) before the last one started. */
  result(): CommonCounts | undefined {
    const seconds = this.seconds;
    if (seconds === undefined) return undefined;
    const counts = { seconds, transactions: 0, bytes: 0 };
    for (const [run, plane] of this.planes) {
      const s = this.window(run)?.stream(plane, 0);
      if (!s) continue;
      counts.transactions += s.transactions;
      counts.bytes += s.bytes;
    }
    return counts;
  }
}
