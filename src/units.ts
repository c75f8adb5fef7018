/**
 * Parsing and formatting of sizes and rates, shared by the native CLI and every dialect.
 *
 * Suffix conventions of the peers (from their specs and help texts):
 * - iperf3: -l/-n/-w/-k are 1024-based, case-insensitive (K = k = 1024); -b is 1000-based, case-insensitive.
 * - iperf 2 and netperf: uppercase K/M/G are 1024-based, lowercase k/m/g 1000-based, for sizes and iperf 2's -b
 *   alike (-b 10M = 10485760 bit/s, -b 2m = 2000000); iperf 2's -b also takes packets/s as "1000pps".
 * - ntttcp-for-linux: -b (I/O size) k/m/g = ×1024ⁿ, -B (rate) k/m/g = ×1000ⁿ; ntttcp for Windows -l: k/m ×1024ⁿ.
 * Our own output: SI prefixes for bits ("9.41 Gbit/s"), binary ones for bytes ("1.10 GiB").
 */
import { UserError } from "./errors.ts";

/** 1024 or 1000 for every suffix letter, or "case": uppercase 1024-based, lowercase 1000-based. */
export type SuffixBase = 1024 | 1000 | "case";

export interface SizeOptions {
  base: SuffixBase;
  /** The option being parsed (e.g. "-l"), for the error message. */
  option?: string;
}

export interface RateOptions {
  /** Default 1000 (SI), as iperf3 -b and ntttcp -B; "case" for iperf 2's -b. */
  base?: SuffixBase;
  /** Accept packets/s as "1000pps" (iperf 2); default true. */
  pps?: boolean;
  option?: string;
}

/** A target rate: bits/s or packets/s (as the stream specs take it). */
export interface ParsedRate {
  bitsPerSecond?: number;
  packetsPerSecond?: number;
}

const POWERS: Record<string, number> = { k: 1, m: 2, g: 3, t: 4 };
const NUMBER = String.raw`(\d+(?:\.\d*)?|\.\d+)(?:[eE]([+-]?\d+))?`;
const SIZE_RE = new RegExp(String.raw`^${NUMBER}(?:([kmgtKMGT])(i?[bB])?|([bB]))?$`);
const RATE_RE = new RegExp(String.raw`^${NUMBER}([kmgtKMGT])?(bps|bit/s|bits/s|pps)?$`, "i");

function parseNumber(mantissa: string, exponent: string | undefined): number {
  return Number(exponent === undefined ? mantissa : `${mantissa}e${exponent}`);
}

function multiplier(letter: string | undefined, base: SuffixBase, binary = false): number {
  if (letter === undefined) return 1;
  const power = POWERS[letter.toLowerCase()]!;
  const b = binary || base === 1024 || (base === "case" && letter === letter.toUpperCase()) ? 1024 : 1000;
  return b ** power;
}

function suffixHelp(base: SuffixBase): string {
  if (base === "case") return "K, M, G or T (×1024ⁿ) or k, m, g or t (×1000ⁿ)";
  return `K, M, G or T (×${base}ⁿ)`;
}

function what(kind: string, text: string, option: string | undefined): string {
  return option === undefined ? `${kind} "${text}"` : `${option} "${text}"`;
}

/**
 * Parses a byte size: "128K", "1M", "64k", "2g", "1.5M", "65536", "4KiB" (an "iB" suffix is always 1024-based).
 * Fractions are truncated to whole bytes, as the peers do. Throws UserError (exit code 2) naming the text and
 * the expected form.
 */
export function parseSize(text: string, options: SizeOptions): number {
  const t = text.trim();
  const m = SIZE_RE.exec(t);
  const value = m ? Math.floor(parseNumber(m[1]!, m[2]) * multiplier(m[3], options.base, m[4]?.toLowerCase() === "ib")) : NaN;
  if (!m || !Number.isSafeInteger(value)) {
    const why = m ? "is too large" : "is not a size";
    throw new UserError(
      `${what("size", text, options.option)} ${why}: expected a number of bytes with an optional suffix ${suffixHelp(options.base)}, e.g. 128K`,
      2,
    );
  }
  return value;
}

/**
 * Parses a target rate: bits/s with an optional prefix ("100M", "2.5g", "10Mbps", "1e9"), or packets/s with a
 * "pps" suffix ("1000pps", "10kpps"). 0 means unlimited. Throws UserError (exit code 2) on anything else.
 */
export function parseRate(text: string, options: RateOptions = {}): ParsedRate {
  const base = options.base ?? 1000;
  const allowPps = options.pps ?? true;
  const t = text.trim();
  const m = RATE_RE.exec(t);
  const isPps = m?.[4]?.toLowerCase() === "pps";
  const value = m ? parseNumber(m[1]!, m[2]) * multiplier(m[3], base) : NaN;
  if (!m || !Number.isFinite(value) || (isPps && !allowPps)) {
    const pps = allowPps ? " or packets/s as e.g. 1000pps" : "";
    throw new UserError(
      `${what("rate", text, options.option)} is not a rate: expected bits/s as a number with an optional suffix ${suffixHelp(base)}, e.g. 100M${pps}`,
      2,
    );
  }
  return isPps ? { packetsPerSecond: value } : { bitsPerSecond: value };
}

// ---------------------------------------------------------------------------------------------------------------
// printf-exact fixed-point formatting

const scratch = new DataView(new ArrayBuffer(8));

/**
 * round-half-even(|x| · 10^decimals) computed exactly from the binary value of x, as glibc's printf does
 * (Number.prototype.toFixed rounds exact ties up instead: 4.625 → "4.63" where printf gives "4.62").
 */
function scaledDigits(x: number, decimals: number): bigint {
  scratch.setFloat64(0, Math.abs(x));
  const hi = scratch.getUint32(0);
  const lo = scratch.getUint32(4);
  const expBits = (hi >>> 20) & 0x7ff;
  let mant = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  let exp: number;
  if (expBits === 0) exp = -1074;
  else {
    mant |= 1n << 52n;
    exp = expBits - 1075;
  }
  const num = mant * 10n ** BigInt(decimals); // |x| · 10^decimals = num · 2^exp
  if (exp >= 0) return num << BigInt(exp);
  const shift = BigInt(-exp);
  const q = num >> shift;
  const r = num - (q << shift);
  const half = 1n << (shift - 1n);
  return r > half || (r === half && (q & 1n) === 1n) ? q + 1n : q;
}

/**
 * C's printf("%*.*f", width, decimals, value) under glibc: exact decimal expansion of the double, ties to even,
 * "-0.00" for negative values that round to zero, "nan"/"inf"/"-inf", right-aligned in `width`.
 */
export function formatFixed(value: number, decimals: number, width = 0): string {
  let s: string;
  if (Number.isNaN(value)) s = "nan";
  else if (!Number.isFinite(value)) s = value > 0 ? "inf" : "-inf";
  else {
    const digits = scaledDigits(value, decimals).toString().padStart(decimals + 1, "0");
    s = decimals > 0 ? `${digits.slice(0, -decimals)}.${digits.slice(-decimals)}` : digits;
    if (value < 0 || Object.is(value, -0)) s = `-${s}`;
  }
  return s.padStart(width);
}

// ---------------------------------------------------------------------------------------------------------------
// our own human-readable output

export interface FormatOptions {
  /** Significant digits (default 3): "9.41", "94.1", "941". */
  digits?: number;
}

/** Decimals that give `digits` significant digits for v (at least 0). */
function decimalsFor(v: number, digits: number): number {
  if (v === 0) return Math.max(0, digits - 1);
  return Math.max(0, digits - 1 - Math.floor(Math.log10(v)));
}

function withSignificant(v: number, digits: number): string {
  const d = decimalsFor(v, digits);
  const s = formatFixed(v, d);
  // 9.996 with 3 digits rounds to "10.00": one decimal too many after the carry.
  if (d > 0 && Number(s) >= 10 ** (Math.floor(Math.log10(v)) + 1)) return formatFixed(v, d - 1);
  return s;
}

/** value scaled by powers of `step` until below it, with the matching prefix; integers below one step stay exact. */
function scaled(value: number, step: number, prefixes: readonly string[], unit: string, digits: number): string {
  if (!Number.isFinite(value)) return `${value} ${prefixes[0]}${unit}`.trimEnd();
  const sign = value < 0 ? "-" : "";
  let v = Math.abs(value);
  let i = 0;
  while (v >= step && i < prefixes.length - 1) {
    v /= step;
    i++;
  }
  let s = i === 0 && Number.isInteger(v) ? String(v) : withSignificant(v, digits);
  if (Number(s) >= step && i < prefixes.length - 1) {
    // 999.7 k with 3 digits rounds to 1000 k: show it as 1.00 M.
    v /= step;
    i++;
    s = withSignificant(v, digits);
  }
  return `${sign}${s} ${prefixes[i]}${unit}`.trimEnd();
}

const SI = ["", "k", "M", "G", "T", "P"] as const;
const IEC = ["", "Ki", "Mi", "Gi", "Ti", "Pi"] as const;

/** Bits per second with an SI prefix: "9.41 Gbit/s", "512 bit/s". */
export function formatBits(bitsPerSecond: number, options: FormatOptions = {}): string {
  return scaled(bitsPerSecond, 1000, SI, "bit/s", options.digits ?? 3);
}

/** Bytes with a binary prefix: "1.10 GiB", "512 B". */
export function formatBytes(bytes: number, options: FormatOptions = {}): string {
  return scaled(bytes, 1024, IEC, "B", options.digits ?? 3);
}

/** A count or a rate of counts with an SI prefix: "950", "12.3 k", "1.20 Mpps" (unit "pps"). */
export function formatCount(n: number, options: FormatOptions & { unit?: string } = {}): string {
  return scaled(n, 1000, SI, options.unit ?? "", options.digits ?? 3);
}

// ---------------------------------------------------------------------------------------------------------------
// iperf's unit letters (-f): b k m g t = bits, 1000-based; B K M G T = bytes, 1024-based; a / A = adaptive

/** iperf3 3.12 (units.c) or iperf 2.1.8 (stdio.c): they differ below 1 and above tera. */
export type IperfFlavor = "iperf3" | "iperf2";

const BYTE_LABELS = ["Byte", "KByte", "MByte", "GByte", "TByte", "PByte"] as const;
const BIT_LABELS = ["bit", "Kbit", "Mbit", "Gbit", "Tbit", "Pbit"] as const;
// Built exactly as the C tables are (1.0 / 1024 / 1024 ...), so products round identically.
const BYTE_FACTORS = [1.0, 1.0 / 1024, 1.0 / 1024 / 1024, 1.0 / 1024 / 1024 / 1024, 1.0 / 1024 / 1024 / 1024 / 1024, 1.0 / 1024 / 1024 / 1024 / 1024 / 1024];
const BIT_FACTORS = [1.0, 1.0 / 1000, 1.0 / 1000 / 1000, 1.0 / 1000 / 1000 / 1000, 1.0 / 1000 / 1000 / 1000 / 1000, 1.0 / 1000 / 1000 / 1000 / 1000 / 1000];
const FIXED_CONV: Record<string, number> = { B: 0, K: 1, M: 2, G: 3, T: 4 };

/**
 * What iperf's unit_snprintf (iperf3) / byte_snprintf (iperf 2) writes for `bytes` (a byte count, or bytes per
 * second for a rate) and a -f letter: "4.88 MByte", " 640 KByte", "20.4 Mbit", "1000 Byte". The peers' report
 * lines append "s" (Transfer) or "s/sec" (Bandwidth) themselves, e.g. "4.88 MBytes  20.4 Mbits/sec".
 * A lowercase letter means bits (the value is multiplied by 8); any letter other than b k m g t (p for iperf 2),
 * in either case, is adaptive, like 'a'/'A'. Numbers are printed with width 4: %4.2f below 9.995, %4.1f below
 * 99.95, else %4.0f; iperf 2 adds %4.3f below 0.9995.
 */
export function formatIperf(bytes: number, letter: string, flavor: IperfFlavor = "iperf3"): string {
  const c = letter.charAt(0);
  const upper = c >= "A" && c <= "Z"; // C isupper() in the C locale
  const maxConv = flavor === "iperf2" ? 5 : 4;
  let n = upper ? bytes : bytes * 8;
  const fixed = flavor === "iperf2" && c.toUpperCase() === "P" ? 5 : FIXED_CONV[c.toUpperCase()];
  let conv = 0;
  if (fixed !== undefined) conv = fixed;
  else {
    const step = upper ? 1024.0 : 1000.0;
    let tmp = flavor === "iperf2" ? Math.abs(n) : n;
    while (tmp >= step && conv < maxConv) {
      tmp /= step;
      conv++;
    }
  }
  n *= upper ? BYTE_FACTORS[conv]! : BIT_FACTORS[conv]!;
  const label = upper ? BYTE_LABELS[conv]! : BIT_LABELS[conv]!;
  const a = flavor === "iperf2" ? Math.abs(n) : n;
  let decimals: number;
  if (flavor === "iperf2" && a < 0.9995) decimals = 3;
  else if (a < 9.995) decimals = 2;
  else if (a < 99.95) decimals = 1;
  else decimals = 0;
  return `${formatFixed(n, decimals, 4)} ${label}`;
}
