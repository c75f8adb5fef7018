/**
 * The subset of C printf netperf's console formats use (%d %u %f %g %s %c %x, flags '-' '0', width, precision, %%),
 * with glibc's behaviour where JavaScript differs: round-half-even on exact ties and "-nan" for NaN.
 */

export type CArg = number | string;

const SPEC = /%([-0]*)(\d*)(?:\.(\d+))?(l{0,2})([dufgscx%])/g;

export function sprintf(format: string, ...args: CArg[]): string {
  let next = 0;
  return format.replace(SPEC, (_m, flags: string, widthText: string, precText: string | undefined, _len: string, conv: string) => {
    if (conv === "%") return "%";
    const arg = args[next++];
    const left = flags.includes("-");
    const zero = flags.includes("0") && !left;
    const width = widthText === "" ? 0 : Number(widthText);
    const prec = precText === undefined ? undefined : Number(precText);
    let body: string;
    switch (conv) {
      case "d":
        body = formatInt(toNumber(arg), prec);
        break;
      case "u":
        body = formatInt(Math.abs(toNumber(arg)), prec);
        break;
      case "x":
        body = formatHex(toNumber(arg), prec);
        break;
      case "f":
        body = formatFixed(toNumber(arg), prec ?? 6);
        break;
      case "g":
        body = formatGeneral(toNumber(arg), prec ?? 6);
        break;
      case "c":
        body = typeof arg === "string" ? arg.slice(0, 1) : String.fromCharCode(toNumber(arg));
        break;
      default:
        body = String(arg ?? "");
        if (prec !== undefined) body = body.slice(0, prec);
    }
    if (body.length >= width) return body;
    if (left) return body.padEnd(width, " ");
    if (zero && conv !== "s" && conv !== "c" && /^-?[\d.]/.test(body)) {
      const neg = body.startsWith("-");
      return (neg ? "-" : "") + body.slice(neg ? 1 : 0).padStart(width - (neg ? 1 : 0), "0");
    }
    return body.padStart(width, " ");
  });
}

function toNumber(a: CArg | undefined): number {
  return typeof a === "number" ? a : Number(a ?? 0);
}

function formatInt(n: number, prec: number | undefined): string {
  const t = Math.trunc(n);
  const digits = Math.abs(t).toString();
  const padded = prec !== undefined ? digits.padStart(prec, "0") : digits;
  return (t < 0 ? "-" : "") + padded;
}

/** %x of a C int: negative values print as their 32-bit two's complement. */
function formatHex(n: number, prec: number | undefined): string {
  const digits = (Math.trunc(n) >>> 0).toString(16);
  return prec !== undefined ? digits.padStart(prec, "0") : digits;
}

/** %g: `prec` significant digits, exponent form below 1e-4 or from 10^prec on, trailing zeros dropped. */
function formatGeneral(x: number, prec: number): string {
  if (!Number.isFinite(x)) return formatFixed(x, 0);
  const p = Math.max(1, prec);
  if (x === 0) return "0";
  const exp = Number(x.toExponential(p - 1).split("e")[1]);
  if (exp < -4 || exp >= p) {
    const [mant = "", e = "0"] = x.toExponential(p - 1).split("e");
    const n = Number(e);
    return `${trimZeros(mant)}e${n < 0 ? "-" : "+"}${String(Math.abs(n)).padStart(2, "0")}`;
  }
  return trimZeros(formatFixed(x, Math.max(0, p - 1 - exp)));
}

const trimZeros = (s: string) => (s.includes(".") ? s.replace(/\.?0+$/, "") : s);

export function formatFixed(x: number, prec: number): string {
  if (Number.isNaN(x)) return "-nan";
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
  let s = x.toFixed(prec);
  // toFixed rounds an exact tie away from zero; glibc rounds it to even.
  const scale = 10 ** prec;
  const scaled = Math.abs(x) * scale;
  if (scaled / scale === Math.abs(x) && scaled % 1 === 0.5 && Math.abs(x) < 1e15) {
    const down = Math.floor(scaled);
    const even = down % 2 === 0 ? down : down + 1;
    s = (x < 0 ? "-" : "") + (even / scale).toFixed(prec);
  }
  if (s.startsWith("-") && /^-0\.?0*$/.test(s) && !(x < 0 || Object.is(x, -0))) s = s.slice(1);
  return s;
}
