import { formatIperf, parseRate as parseSharedRate, parseSize } from "../../src/units.ts";

/**
 * iperf 2.1.8's number dialect. Input: a number with an optional k/m/g (x 10^3) or K/M/G (x 2^10) suffix, for
 * sizes and for rates alike (-b 10M = 10485760 bit/s and -b 2m = 2000000 were on the wire), and -b also takes "pps".
 * Output: byte_snprintf-style "4 significant places + unit" figures (1.38 MBytes, 11.5 Mbits/sec, 0.000 Bytes).
 */

/** Parses "100K", "2m", "1.5G", "1470" (whole bytes, truncated as iperf does). */
export function parseSuffixed(text: string, what: string): number {
  return parseSize(text, { base: "case", option: what });
}

export interface Iperf2Rate {
  value: number;
  units: "bps" | "pps";
}

/** -b: bits/s with iperf 2 suffixes, or "<n>pps". A ",stddev" part (variable load) is accepted and ignored. */
export function parseRate(text: string): Iperf2Rate {
  const r = parseSharedRate(text.split(",")[0]!, { base: "case", pps: true, option: "-b" });
  return r.packetsPerSecond !== undefined ? { value: Math.floor(r.packetsPerSecond), units: "pps" } : { value: Math.floor(r.bitsPerSecond ?? 0), units: "bps" };
}

/** Report format letters of -f: lower case = bits, upper case = bytes; a/A = adaptive. */
export type FormatLetter = "a" | "A" | "b" | "B" | "k" | "K" | "m" | "M" | "g" | "G" | "t" | "T";
export const FORMAT_LETTERS = ["a", "A", "b", "B", "k", "K", "m", "M", "g", "G", "t", "T"] as const;

/** byte_snprintf of iperf 2.1.8: "1.38 MByte", " 134 KByte", "0.000 Byte" (callers append "s" or "s/sec"). */
export function formatUnits(bytes: number, format: FormatLetter): string {
  return formatIperf(bytes, format, "iperf2");
}

/** C's "%.2g": two significant digits, exponent form outside 1e-4..1e2 (100% prints "1e+02", as iperf does). */
export function formatG2(value: number): string {
  if (!Number.isFinite(value)) return Number.isNaN(value) ? "-nan" : value > 0 ? "inf" : "-inf";
  if (value === 0) return "0";
  const exp = Math.floor(Math.log10(Math.abs(Number(value.toPrecision(2)))));
  if (exp < -4 || exp >= 2) {
    const [mant, e] = value.toExponential(1).split("e");
    const n = Number(e);
    return `${trimZeros(mant!)}e${n < 0 ? "-" : "+"}${String(Math.abs(n)).padStart(2, "0")}`;
  }
  return trimZeros(value.toFixed(Math.max(0, 1 - exp)));
}

function trimZeros(s: string): string {
  return s.includes(".") ? s.replace(/\.?0+$/, "") : s;
}
