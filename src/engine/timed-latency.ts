import { HIST_BUCKETS, type StreamCounters } from "../counters.ts";
import { meanLatency, sampleStdev } from "../formulas.ts";
import { bucketHigh, bucketLow, bucketValue } from "../histogram.ts";

/** The events a stream timed in a window (transactions, timed calls, stamped bursts), in microseconds. */
export interface TimedLatency {
  count: number;
  meanUs: number;
  minUs: number;
  maxUs: number;
  stdevUs: number;
}

/**
 * What a stream timed in a window (`c`, a Window's stream): count, mean and standard deviation exactly, from its
 * counters. Min and max are the window's own from its histogram (within a bucket, 0.78 %); where the stream's running
 * min or max lies in that bucket it is the figure itself (every window from the stream's open). A window without its
 * histogram (cut without one) gives the running min and max. undefined when nothing was timed.
 */
export function timedLatency(c: StreamCounters): TimedLatency | undefined {
  if (!(c.timed > 0)) return undefined;
  const base = { count: c.timed, meanUs: meanLatency(c.latencySumUs, c.timed), stdevUs: sampleStdev(c.timed, c.latencySumUs, c.latencySqSumUs) };
  const h = c.histogram;
  if (h.length !== HIST_BUCKETS) return { ...base, minUs: c.latencyMinUs, maxUs: c.latencyMaxUs };
  let lo = 0;
  while (lo < HIST_BUCKETS - 1 && h[lo] === 0) lo++;
  let hi = HIST_BUCKETS - 1;
  while (hi > lo && h[hi] === 0) hi--;
  const within = (v: number, i: number) => v >= bucketLow(i) && (v < bucketHigh(i) || i === HIST_BUCKETS - 1);
  return {
    ...base,
    minUs: within(c.latencyMinUs, lo) ? c.latencyMinUs : bucketValue(lo),
    maxUs: within(c.latencyMaxUs, hi) ? c.latencyMaxUs : bucketValue(hi),
  };
}
