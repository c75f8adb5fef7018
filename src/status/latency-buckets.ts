import { bucketValue } from "../histogram.ts";

/**
 * The fixed buckets of /metrics' latency histogram: upper bounds in seconds, 1-2-5 steps from 1 µs to 10 s. Fixed in
 * the code so every pod of a fleet exposes the same `le` values and histogram_quantile() can sum them across pods;
 * RR round trips on a LAN sit at 10-100 µs, a loaded WAN's tail at seconds.
 */
export const LATENCY_BUCKETS_SECONDS: readonly number[] = [
  1e-6, 2e-6, 5e-6, 1e-5, 2e-5, 5e-5, 1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 1e-2, 2e-2, 5e-2, 0.1, 0.2, 0.5, 1, 2, 5, 10,
];

/**
 * Cumulative counts per LATENCY_BUCKETS_SECONDS bound (the +Inf bucket is the total) of the engine's fine histogram
 * (src/histogram.ts). A fine bucket falls under a bound when its midpoint does, as the percentiles read it: the fine
 * edges meet the bounds up to 2 ms exactly and stay within 1/64 of them above.
 */
export function cumulativeBuckets(hist: Uint32Array): number[] {
  const out = new Array<number>(LATENCY_BUCKETS_SECONDS.length).fill(0);
  let b = 0;
  let below = 0;
  for (let i = 0; i < hist.length; i++) {
    const n = hist[i]!;
    if (n === 0) continue;
    const us = bucketValue(i);
    while (b < out.length && us > LATENCY_BUCKETS_SECONDS[b]! * 1e6) out[b++] = below;
    below += n;
  }
  while (b < out.length) out[b++] = below;
  return out;
}
