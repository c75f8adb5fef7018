import { UserError } from "../../src/errors.ts";

/**
 * iperf 2.1.8's number dialect. Input: a number with an optional k/m/g (x 10^3) or K/M/G (x 2^10) suffix, for
 * sizes and for rates alike (-b 10M = 10485760 bit/s and -b 2m = 2000000 were on the wire), and -b also takes "pps".
 * Output: byte_snprintf-style "4 significant places + unit" figures (1.38 MBytes, 11.5 Mbits/sec, 0.000 Bytes).
 */

const MULTIPLIER: Record<string, number> = { k: 1e3, m: 1e6, g: 1e9, K: 1024, M: 1024 ** 2, G: 1024 ** 3 };

/** Parses "100K", "2m", "1.5G", "1470". Fractions are kept (the caller truncates where iperf does). */
export function parseSuffixed(text: string, what: string): number {
  const m = /^\s*(\d+(?:\.\d*)?|\.\d+)(?:e([+-]?\d+))?([kmgKMG])?\s*$/.exec(text);
  if (!m) throw new UserError(`${what} "${text}" is not a number: use digits with an optional k, m, g (x1000) or K, M, G (x1024) suffix`);
  const value = Number(m[1]) * 10 ** Number(m[2] ?? 0) * (m[3] ? MULTIPLIER[m[3]]! : 1);
  if (!Number.isFinite(value)) throw new UserError(`${what} "${text}" is too large`);
  return value;
}

export interface Iperf2Rate {
  value: number;
  units: "bps" | "pps";
}

/** -b: bits/s with iperf 2 suffixes, or "<n>pps". A ",stddev" part (variable load) is accepted and ignored. */
export function parseRate(text: string): Iperf2Rate {
  const main = text.split(",")[0]!.trim();
  const pps = /^(.*?)\s*pps$/i.exec(main);
  if (pps) return { value: Math.floor(parseSuffixed(pps[1]!, "-b packets per second")), units: "pps" };
  return { value: Math.floor(parseSuffixed(main, "-b bandwidth")), units: "bps" };
}

/** Report format letters of -f: lower case = bits, upper case = bytes; a/A = adaptive. */
export type FormatLetter = "a" | "A" | "b" | "B" | "k" | "K" | "m" | "M" | "g" | "G" | "t" | "T";
export const FORMAT_LETTERS = ["a", "A", "b", "B", "k", "K", "m", "M", "g", "G", "t", "T"] as const;

const BYTE_LABELS = ["Byte", "KByte", "MByte", "GByte", "TByte", "PByte"];
const BIT_LABELS = ["bit", "Kbit", "Mbit", "Gbit", "Tbit", "Pbit"];
const FIXED_SCALE: Record<string, number> = { B: 0, K: 1, M: 2, G: 3, T: 4 };

/**
 * byte_snprintf: `bytes` (a byte count, or bytes per second for a rate) printed in `format`. Lower-case formats print
 * bits (value x 8) in powers of 1000; upper-case print bytes in powers of 1024. Always 4 places wide, then the unit.
 */
export function formatUnits(bytes: number, format: FormatLetter): string {
  const bits = format === format.toLowerCase();
  let value = bits ? bytes * 8 : bytes;
  const base = bits ? 1000 : 1024;
  let scale: number;
  const upper = format.toUpperCase();
  if (upper === "A") {
    scale = 0;
    let t = Math.abs(value);
    while (t >= base && scale < 5) {
      t /= base;
      scale++;
    }
  } else {
    scale = FIXED_SCALE[upper] ?? 0;
  }
  value /= base ** scale;
  const label = (bits ? BIT_LABELS : BYTE_LABELS)[scale]!;
  const a = Math.abs(value);
  const digits = a < 0.9995 ? 3 : a < 9.995 ? 2 : a < 99.95 ? 1 : 0;
  return `${value.toFixed(digits).padStart(4)} ${label}`;
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
