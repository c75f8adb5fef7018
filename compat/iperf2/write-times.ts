import { HIST_BUCKETS } from "../../src/counters.ts";
import type { TimedLatency } from "../../src/engine/timed-latency.ts";
import { bucketValue } from "../../src/histogram.ts";
import { formatFixed } from "../../src/units.ts";
import type { ClientPlan } from "./plan.ts";
import type { PdfSpec } from "./pdf-line.ts";

/**
 * A TCP client's --tcp-write-times and --histograms (2.1.8's layout, 2.2.1's figures: 2.1.8 prints the columns with
 * zero counts; 2.2.1 times each write): the time of every write call, from its first byte offered to the kernel to
 * its last taken, as the Worker times it.
 */

export type Histograms = NonNullable<ClientPlan["histograms"]>;

/** "write-times avg/min/max/stdev (cnt)": ms with 3 decimals, 0 for what a window without writes cannot have. */
export function writeTimesText(l: TimedLatency | undefined): string {
  const ms = (us: number) => formatFixed(us / 1000, 3);
  if (!l) return "0.000/0.000/0.000/0.000 ms (0)";
  return `${ms(l.meanUs)}/${ms(l.minUs)}/${ms(l.maxUs)}/${ms(l.count >= 2 ? l.stdevUs : 0)} ms (${l.count})`;
}

/** "Enabled write histograms bin-width=0.100 ms, bins=10000": the client banner's last line. */
export function histogramsBanner(h: Histograms): string {
  return `Enabled write histograms bin-width=${formatFixed(h.binUs / 1000, 3)} ms, bins=${h.bins}`;
}

/** The PDF line's spec: "W8" for an interval, "W8(f)" for the final line. */
export function writePdfSpec(h: Histograms, final: boolean): PdfSpec {
  return { label: final ? "W8(f)" : "W8", binText: `${h.width}${h.unit}`, binCount: h.bins, lowerCi: h.lowerCi, upperCi: h.upperCi };
}

/**
 * The window's write times in --histograms bins (index from 0: [k·w, (k+1)·w)), from the stream's latency histogram:
 * each bucket counts at its midpoint, so a write within 0.78 % of a bin's edge can land in its neighbour. Past bin
 * `bins`: `high` (stock's "obu").
 */
export function writeTimeBins(histogram: Uint32Array, h: Histograms): { bins: Map<number, number>; high: number } {
  const bins = new Map<number, number>();
  let high = 0;
  if (histogram.length !== HIST_BUCKETS) return { bins, high };
  for (let i = 0; i < HIST_BUCKETS; i++) {
    const n = histogram[i]!;
    if (n === 0) continue;
    const bin = Math.floor(bucketValue(i) / h.binUs);
    // Stock's edge: a value in bin `bins` itself still counts in it.
    if (bin > h.bins) high += n;
    else bins.set(bin, (bins.get(bin) ?? 0) + n);
  }
  return { bins, high };
}
