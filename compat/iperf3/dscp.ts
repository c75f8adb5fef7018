/** --dscp: a 6-bit DSCP value (decimal, 0x hex, 0 octal) or its RFC 2474/2597/3246/5865/8622 name. */

const NAMES: Record<string, number> = {
  le: 1,
  ef: 46,
  va: 44,
  ...Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`cs${i}`, i * 8])),
  ...Object.fromEntries([1, 2, 3, 4].flatMap((c) => [1, 2, 3].map((d) => [`af${c}${d}`, c * 8 + d * 2]))),
};

/** The DSCP (0..63), or undefined when the text is neither a value in range nor a known name. */
export function parseDscp(text: string): number | undefined {
  const t = text.trim().toLowerCase();
  const named = NAMES[t];
  if (named !== undefined) return named;
  let n: number;
  if (/^0x[0-9a-f]+$/.test(t)) n = parseInt(t.slice(2), 16);
  else if (/^0[0-7]+$/.test(t)) n = parseInt(t.slice(1), 8);
  else if (/^\d+$/.test(t)) n = Number(t);
  else return undefined;
  return n >= 0 && n <= 63 ? n : undefined;
}
