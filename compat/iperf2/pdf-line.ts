import { iperf2HistogramSummary } from "../../src/formulas.ts";
import { formatFixed } from "../../src/units.ts";
import { idTag, intervalText } from "./text-report.ts";

/** One of iperf 2's histograms as its PDF line prints it: its name, bin width, bin count and confidence bounds. */
export interface PdfSpec {
  /** "BB8(f)", "W8", "W8(f)": the histogram's name, "(f)" on the final line. */
  label: string;
  /** The bin width as printed: "100us", "1ms". */
  binText: string;
  binCount: number;
  /** Confidence bounds in percent (5 and 95 unless --histograms names others). */
  lowerCi: number;
  upperCi: number;
}

/**
 * "[  1] 0.0000-1.0497 sec W8(f)-PDF: bin(w=100us):cnt(11)=1:2,2:7,3:1,4:1 (5.00/95.00/99.7%=1/4/4,Outliers=0,obl/obu=0/0)"
 * (histogram_print): bins printed from 1, the count with what fell outside them; an upper bound above 99.7 % swaps its place with 99.7's, as stock does.
 */
export function pdfLine(id: string | number, start: number, end: number, bins: ReadonlyMap<number, number>, spec: PdfSpec, outOfBounds: { low: number; high: number }): string {
  const sorted = [...bins.entries()].filter(([, n]) => n > 0).sort((a, b) => a[0] - b[0]);
  const outside = outOfBounds.low + outOfBounds.high;
  // The count, and the population the bounds are shares of, hold what fell outside the bins too.
  const count = sorted.reduce((a, [, n]) => a + n, outside);
  const s = iperf2HistogramSummary(bins, spec.binCount, { lower: spec.lowerCi, upper: spec.upperCi }, outside);
  const lo = formatFixed(spec.lowerCi, 2);
  const hi = formatFixed(spec.upperCi, 2);
  const bounds = spec.upperCi > 99.7 ? `${lo}/99.7/${hi}/%=${s.lower}/${s.upper3Stdev}/${s.upper}` : `${lo}/${hi}/99.7%=${s.lower}/${s.upper}/${s.upper3Stdev}`;
  return (
    // Stock cuts the last character of "cnt(N)=1:17,2:1,": with no bins, the "=".
    `${idTag(id)} ${intervalText(start, end)} ${spec.label}-PDF: bin(w=${spec.binText}):cnt(${count})${sorted.length ? "=" : ""}${sorted.map(([b, n]) => `${b + 1}:${n}`).join(",")} ` +
    `(${bounds},Outliers=${s.outliers},obl/obu=${outOfBounds.low}/${outOfBounds.high})`
  );
}
