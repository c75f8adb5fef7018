import { describe, expect, test } from "bun:test";
import { blankCounters, HIST_BUCKETS } from "../counters.ts";
import { bucketOf, bucketValue, record } from "../histogram.ts";
import { timedLatency } from "./timed-latency.ts";

/** A stream's counters after timing `all`, and the window holding only the last `inWindow` of them. */
function timedWindow(all: number[], inWindow: number) {
  const c = blankCounters();
  c.histogram = new Uint32Array(HIST_BUCKETS);
  for (const [i, us] of all.entries()) {
    c.latencyMinUs = c.latencyMinUs === 0 ? us : Math.min(c.latencyMinUs, us);
    c.latencyMaxUs = Math.max(c.latencyMaxUs, us);
    if (i < all.length - inWindow) continue;
    c.timed++;
    c.latencySumUs += us;
    c.latencySqSumUs += us * us;
    record(c.histogram, us);
  }
  return c;
}

describe("timedLatency", () => {
  test("nothing timed: undefined", () => {
    expect(timedLatency(blankCounters())).toBeUndefined();
  });

  test("a window from the stream's open: count, mean, stdev and the exact min and max", () => {
    const l = timedLatency(timedWindow([1459, 232, 10891, 300, 500], 5))!;
    expect(l.count).toBe(5);
    expect(l.meanUs).toBeCloseTo((1459 + 232 + 10891 + 300 + 500) / 5, 9);
    expect(l.minUs).toBe(232);
    expect(l.maxUs).toBe(10891);
    const mean = l.meanUs;
    const m2 = [1459, 232, 10891, 300, 500].reduce((a, v) => a + (v - mean) ** 2, 0);
    expect(l.stdevUs).toBeCloseTo(Math.sqrt(m2 / 4), 6);
  });

  test("a later window: its own min and max (from its histogram), not the running ones", () => {
    const l = timedLatency(timedWindow([5, 90_000, 1000, 2000], 2))!;
    expect(l.count).toBe(2);
    expect(l.minUs).toBe(bucketValue(bucketOf(1000)));
    expect(l.maxUs).toBe(bucketValue(bucketOf(2000)));
    expect(Math.abs(l.minUs - 1000) / 1000).toBeLessThan(0.008);
  });

  test("a window cut without histograms falls back to the running min and max", () => {
    const c = timedWindow([5, 7], 2);
    c.histogram = new Uint32Array(0);
    expect(timedLatency(c)).toMatchObject({ minUs: 5, maxUs: 7 });
  });
});
