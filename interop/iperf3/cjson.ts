/**
 * JSON text the way iperf3 3.12's bundled cJSON prints it, so our messages and our -J document match the stock
 * tool byte for byte where the values match: compact for the control connection, tab-indented for -J.
 *
 * Numbers: a value equal to its int64 truncation prints as an integer (3.12 prints negatives as unsigned 64-bit,
 * e.g. -1 as 18446744073709551615; we print them as signed unless asked to mimic that), anything else with %1.15g,
 * or %1.17g when 15 digits do not read back within one ulp-ish (cJSON's compare_double).
 */

/** An object whose keys may repeat (the 3.12 -J document repeats sock_bufsize & co. in bidir mode). */
export class Entries {
  constructor(readonly entries: ReadonlyArray<readonly [string, CValue]>) {}
}

export type CValue = null | boolean | number | string | Entries | readonly CValue[] | { readonly [key: string]: CValue | undefined };

export interface PrintOptions {
  /** Print negative integers as 3.12 does (two's complement, unsigned 64-bit). Default false. */
  negativeAsUnsigned?: boolean;
}

const TWO63 = 2 ** 63;
const DBL_EPSILON = 2.220446049250313e-16;

/** C's %.<precision>g for a finite double. */
export function formatG(d: number, precision: number): string {
  if (d === 0) return Object.is(d, -0) ? "-0" : "0";
  const [mant, expText] = d.toExponential(precision - 1).split("e") as [string, string];
  const exp = Number(expText);
  if (exp < -4 || exp >= precision) {
    const m = stripZeros(mant);
    const sign = exp < 0 ? "-" : "+";
    return `${m}e${sign}${String(Math.abs(exp)).padStart(2, "0")}`;
  }
  return stripZeros(d.toFixed(precision - 1 - exp));
}

function stripZeros(s: string): string {
  if (!s.includes(".")) return s;
  return s.replace(/0+$/, "").replace(/\.$/, "");
}

export function formatNumber(d: number, opts: PrintOptions = {}): string {
  if (!Number.isFinite(d)) return "null";
  // cJSON keeps a saturated int64 beside every double and prints the integer when both agree.
  const vi = d >= TWO63 ? 2n ** 63n - 1n : d <= -TWO63 ? -(2n ** 63n) : BigInt(Math.trunc(d));
  if (d === Number(vi)) {
    if (vi < 0n && opts.negativeAsUnsigned) return (2n ** 64n + vi).toString();
    return vi.toString();
  }
  const g15 = formatG(d, 15);
  const back = Number(g15);
  const max = Math.max(Math.abs(back), Math.abs(d));
  // Within 1e-15 of DBL_MAX, 15 digits round up past it and read back as infinity (cJSON's check passes, since
  // inf <= inf); 17 digits keep the number finite, so what we print we can also read.
  return Number.isFinite(back) && Math.abs(back - d) <= max * DBL_EPSILON ? g15 : formatG(d, 17);
}

export function formatString(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    switch (c) {
      case 0x22: out += '\\"'; break;
      case 0x5c: out += "\\\\"; break;
      case 0x08: out += "\\b"; break;
      case 0x0c: out += "\\f"; break;
      case 0x0a: out += "\\n"; break;
      case 0x0d: out += "\\r"; break;
      case 0x09: out += "\\t"; break;
      default:
        out += c < 0x20 ? `\\u${c.toString(16).padStart(4, "0")}` : s[i];
    }
  }
  return out + '"';
}

function entriesOf(v: Entries | { readonly [key: string]: CValue | undefined }): Array<readonly [string, CValue]> {
  if (v instanceof Entries) return [...v.entries];
  const out: Array<readonly [string, CValue]> = [];
  for (const [k, x] of Object.entries(v)) if (x !== undefined) out.push([k, x]);
  return out;
}

/** cJSON_PrintUnformatted. */
export function printCompact(v: CValue, opts: PrintOptions = {}): string {
  if (v === null) return "null";
  if (typeof v === "boolean") return v ? "true" : "false";
  if (typeof v === "number") return formatNumber(v, opts);
  if (typeof v === "string") return formatString(v);
  if (Array.isArray(v)) return `[${v.map((x: CValue) => printCompact(x, opts)).join(",")}]`;
  const e = entriesOf(v as Entries | { readonly [key: string]: CValue | undefined });
  return `{${e.map(([k, x]) => `${formatString(k)}:${printCompact(x, opts)}`).join(",")}}`;
}

/** cJSON_Print: tab indentation, "key":<TAB>value, array elements separated by ", " on one line. */
export function printFormatted(v: CValue, opts: PrintOptions = {}, depth = 0): string {
  if (v === null || typeof v !== "object") return printCompact(v, opts);
  if (Array.isArray(v)) return `[${v.map((x: CValue) => printFormatted(x, opts, depth + 1)).join(", ")}]`;
  const e = entriesOf(v as Entries | { readonly [key: string]: CValue | undefined });
  const inner = "\t".repeat(depth + 1);
  let out = "{\n";
  e.forEach(([k, x], i) => {
    out += `${inner}${formatString(k)}:\t${printFormatted(x, opts, depth + 1)}${i < e.length - 1 ? "," : ""}\n`;
  });
  return `${out}${"\t".repeat(depth)}}`;
}
