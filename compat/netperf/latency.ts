import type { StreamCounters } from "../../src/counters.ts";
import { bucketValue, count, percentiles } from "../../src/histogram.ts";
import type { LatencyStats } from "./figures.ts";

/**
 * netperf's latency selectors from the engine's per-transaction histogram: whole microseconds for min, max and
 * percentiles (netperf prints them with %d), mean and standard deviation to two decimals. The mean comes from the
 * exact sum; the spread from the bucket values (within 0.8 %).
 */
export function latencyStats(c: StreamCounters): LatencyStats | undefined {
  const n = count(c.histogram);
  if (n === 0 || c.transactions === 0) return undefined;
  const mean = c.latencySumUs / c.transactions;
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
