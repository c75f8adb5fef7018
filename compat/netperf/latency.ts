import { HIST_BUCKETS, type StreamCounters } from "../../src/counters.ts";
import { meanLatency, pooledLatency } from "../../src/formulas.ts";
import { bucketValue, count, merge, percentiles } from "../../src/histogram.ts";
import type { LatencyStats } from "./figures.ts";

/** What netperf's latency figures are computed from: one stream's histogram and its exact sum, min and max. */
export type LatencyParts = Pick<StreamCounters, "histogram" | "latencySumUs" | "transactions" | "latencyMinUs" | "latencyMaxUs">;

/**
 * netperf's latency selectors from the engine's per-transaction histogram: whole microseconds for min, max and
 * percentiles (netperf prints them with %d), mean and standard deviation to two decimals. The mean comes from the
 * exact sum; the spread from the bucket values (within 0.8 %).
 */
export function latencyStats(c: LatencyParts): LatencyStats | undefined {
  const n = count(c.histogram);
  if (n === 0 || c.transactions === 0) return undefined;
  const mean = meanLatency(c.latencySumUs, c.transactions);
  let sq = 0;
  for (let i = 0; i < c.histogram.length; i++) {
    const k = c.histogram[i]!;
    if (k !== 0) sq += k * (bucketValue(i) - mean) ** 2;
  }
  const [p50, p90, p99] = percentiles(c.histogram, [50, 90, 99]) as [number, number, number];
  return {
    min: Math.floor(c.latencyMinUs),
    max: Math.floor(c.latencyMaxUs),
    mean,
    stddev: Math.sqrt(sq / n),
    p50: Math.floor(p50),
    p90: Math.floor(p90),
    p99: Math.floor(p99),
  };
}

/** Several tests' latency as one: histograms added, sums, min and max pooled (src/formulas.ts pooledLatency). */
export function combineLatency(parts: readonly LatencyParts[]): LatencyParts {
  const histogram = new Uint32Array(HIST_BUCKETS);
  for (const p of parts) if (p.histogram.length === HIST_BUCKETS) merge(histogram, p.histogram);
  const pooled = pooledLatency(parts.map((p) => ({ sumUs: p.latencySumUs, count: p.transactions, minUs: p.latencyMinUs, maxUs: p.latencyMaxUs })));
  return {
    histogram,
    latencySumUs: parts.reduce((a, p) => a + (p.transactions > 0 ? p.latencySumUs : 0), 0),
    transactions: parts.reduce((a, p) => a + p.transactions, 0),
    latencyMinUs: pooled.minUs,
    latencyMaxUs: pooled.maxUs,
  };
}
