/**
 * --server-bitrate-limit for tests that asked for no rate (unlimited TCP): like 3.12, the rate over the last
 * --server-bitrate-limit window (default 5 s; /0 = the whole test so far) of every stream, sent and received alike,
 * ends a test that runs faster. The rate is a window of the Test, measured from the cut that opens it.
 */
import type { Cut } from "../../src/engine/cut.ts";
import type { TestRun } from "../../src/engine/test-run.ts";
import { throughputBps } from "../../src/formulas.ts";
import type { SampledStream } from "./sampler.ts";

/** Stamps are doubles: a window of exactly N ms, found by subtraction, can come out a rounding short of N. */
const ROUNDING_MS = 1e-6;

export class RateWatch {
  /** Cuts taken at each look; the window opens at the oldest. */
  private readonly cuts: Cut[] = [];

  constructor(
    private readonly run: Pick<TestRun, "cut" | "between">,
    private readonly streams: readonly SampledStream[],
    /** --server-bitrate-limit's window in seconds; 0 = the whole test. */
    private readonly windowS: number,
  ) {}

  /** A look now: the rate over the window and its length, once a whole window (or, for /0, a second) has passed. */
  look(nowMs = performance.now()): { bps: number; seconds: number } | undefined {
    const windowMs = this.windowS * 1000;
    const now = this.run.cut(false, nowMs);
    this.cuts.push(now);
    // The whole test needs only its first cut; a sliding window, the cuts since its start.
    if (windowMs === 0) this.cuts.splice(1, this.cuts.length - 2);
    while (windowMs > 0 && this.cuts.length > 2 && nowMs - this.cuts[1]!.atMs + ROUNDING_MS >= windowMs) this.cuts.shift();
    const w = this.run.between(this.cuts[0]!, now);
    const spanMs = now.atMs - this.cuts[0]!.atMs;
    if (spanMs <= 0 || spanMs + ROUNDING_MS < (windowMs || 1000)) return undefined;
    const bytes = this.streams.reduce((n, s) => n + (w.stream(s.plane, s.index)?.bytes ?? 0), 0);
    return { bps: throughputBps(bytes, w.seconds), seconds: w.seconds };
  }
}
