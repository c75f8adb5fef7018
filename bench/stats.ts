/** Statistics over a handful of repeats: few samples and a noisy shared machine, so medians, never means. */

export function median(xs: readonly number[]): number | undefined {
  if (xs.length === 0) return undefined;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

export function max(xs: readonly number[]): number | undefined {
  return xs.length === 0 ? undefined : Math.max(...xs);
}

/**
 * Ratio of each repeat's pair: the two runs of a repeat ran back to back, so the background load they saw is
 * about the same, which a ratio of two medians taken over the whole bench would not guarantee.
 */
export function pairedRatios(numerators: readonly (number | undefined)[], denominators: readonly (number | undefined)[]): number[] {
  const out: number[] = [];
  for (let i = 0; i < Math.min(numerators.length, denominators.length); i++) {
    const n = numerators[i], d = denominators[i];
    if (n !== undefined && d !== undefined && d > 0) out.push(n / d);
  }
  return out;
}
