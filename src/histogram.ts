/**
 * Latency histogram over microseconds: a plain Uint32Array of HIST_BUCKETS counts, so a Worker can keep it inside
 * the counters SharedArrayBuffer and the main thread can snapshot it without a message.
 *
 * Layout (log-linear, HDR style). A latency is first scaled to units of 1/32 µs (a power of two, so scaling and
 * every bucket edge are exact binary fractions). Units below 128 (< 4 µs) get one bucket each (width 1/32 µs).
 * Above that, each power of two [2^(k+6), 2^(k+7)) units is cut into 64 equal buckets of 2^k units:
 *
 *   bucket(v) = 64·k + (v >> k),  k = max(0, msb(v) − 6)
 *
 * so widths are ≤ 0.0625 µs below 8 µs (≤ 0.1 µs below ~6 µs as required) and the representative midpoint is
 * within 1/128 (0.78 %) of any value in its bucket above 4 µs. The 2048 buckets reach 2^37 units ≈ 4295 s;
 * anything beyond (and +Infinity) is counted in the last bucket, NaN and negatives in the first.
 *
 * A stream's histogram has exactly one writer (the Worker that owns the stream), so record() is a plain increment.
 */
import { HIST_BUCKETS } from "./counters.ts";

/** 1/32 µs per unit: exact in binary floating point. */
const UNITS_PER_US = 32;
const SUB_BITS = 6; // 64 sub-buckets per power of two
const SUB_COUNT = 1 << SUB_BITS;
const TWO_POW_32 = 4294967296;
const LAST = HIST_BUCKETS - 1;
/** Highest band shift that still fits in HIST_BUCKETS (30 for 2048 buckets). */
const MAX_SHIFT = (HIST_BUCKETS >> SUB_BITS) - 2;

/** Bucket index of a latency in microseconds. Hot path: no allocation, a handful of operations. */
export function bucketOf(us: number): number {
  const v = us * UNITS_PER_US;
  if (v >= 0 && v < TWO_POW_32) {
    const n = v >>> 0; // floor for 0 <= v < 2^32
    let k = 25 - Math.clz32(n); // msb(n) - 6
    if (k < 0) k = 0;
    return (k << SUB_BITS) + (n >>> k);
  }
  if (!(v >= 0)) return 0; // negative or NaN: a clock glitch must not corrupt the counts
  // Beyond 2^32 units (~134 s) the 32-bit tricks no longer apply; rare, so a slower exact path is fine.
  const hi = Math.floor(v / TWO_POW_32);
  if (hi >= TWO_POW_32) return LAST;
  const k = 57 - Math.clz32(hi); // msb(v) - 6, where msb(v) = 32 + msb(hi) = 63 - clz32(hi)
  if (k > MAX_SHIFT) return LAST;
  return k * SUB_COUNT + Math.floor(v / 2 ** k);
}

function shiftOf(i: number): number {
  return i < 2 * SUB_COUNT ? 0 : (i >> SUB_BITS) - 1;
}

function checkIndex(i: number): void {
  if (!Number.isInteger(i) || i < 0 || i > LAST) throw new RangeError(`histogram bucket ${i} is outside 0..${LAST}`);
}

/** Lowest latency (µs, inclusive) counted in bucket i. */
export function bucketLow(i: number): number {
  checkIndex(i);
  const k = shiftOf(i);
  return ((i - k * SUB_COUNT) * 2 ** k) / UNITS_PER_US;
}

/** Upper edge (µs, exclusive) of bucket i; equals bucketLow(i + 1). The last bucket also holds clamped values. */
export function bucketHigh(i: number): number {
  checkIndex(i);
  const k = shiftOf(i);
  return ((i - k * SUB_COUNT + 1) * 2 ** k) / UNITS_PER_US;
}

/** Representative latency of bucket i: its midpoint. */
export function bucketValue(i: number): number {
  return (bucketLow(i) + bucketHigh(i)) / 2;
}

/** Counts one latency sample. Hot path. */
export function record(counts: Uint32Array, us: number): void {
  counts[bucketOf(us)]!++;
}

/**
 * Accepts a full histogram, or an empty array (snapshots taken without histograms) which reads as "no samples".
 * A longer array would mean a caller passed the whole multi-stream buffer by mistake.
 */
function checkCounts(counts: Uint32Array): void {
  if (counts.length !== HIST_BUCKETS && counts.length !== 0) {
    throw new RangeError(`histogram has ${counts.length} buckets, expected ${HIST_BUCKETS}`);
  }
}

/** Number of samples. */
export function count(counts: Uint32Array): number {
  checkCounts(counts);
  let n = 0;
  for (let i = 0; i < counts.length; i++) n += counts[i]!;
  return n;
}

/**
 * Nearest-rank rank for percentile p of n samples: ceil(p/100 · n), at least 1. The product is formed before the
 * division and trimmed by a relative hair so that e.g. p = 7, n = 100 gives 7, not 8 through rounding noise.
 */
function rankOf(p: number, n: number): number {
  const x = (Math.min(100, Math.max(0, p)) * n) / 100;
  return Math.max(1, Math.ceil(x - x * 1e-12));
}

/**
 * Nearest-rank percentile (p in 0..100, clamped) over the buckets: the representative value of the bucket that
 * holds the ceil(p/100 · n)-th smallest sample. NaN when there are no samples or p is NaN.
 */
export function percentile(counts: Uint32Array, p: number): number {
  const n = count(counts);
  if (n === 0 || Number.isNaN(p)) return NaN;
  const rank = rankOf(p, n);
  let seen = 0;
  for (let i = 0; i < counts.length; i++) {
    seen += counts[i]!;
    if (seen >= rank) return bucketValue(i);
  }
  return bucketValue(LAST); // unreachable: seen reaches n >= rank
}

/** Several percentiles in one pass; results in the order of ps. */
export function percentiles(counts: Uint32Array, ps: readonly number[]): number[] {
  const n = count(counts);
  const out = ps.map(() => NaN);
  if (n === 0) return out;
  const order = ps
    .map((p, j) => ({ j, rank: Number.isNaN(p) ? NaN : rankOf(p, n) }))
    .filter((e) => !Number.isNaN(e.rank))
    .sort((a, b) => a.rank - b.rank);
  let next = 0;
  let seen = 0;
  for (let i = 0; i < counts.length && next < order.length; i++) {
    seen += counts[i]!;
    while (next < order.length && seen >= order[next]!.rank) out[order[next++]!.j] = bucketValue(i);
  }
  return out;
}

/** Mean of the samples, each taken at its bucket's representative value. NaN when empty. */
export function mean(counts: Uint32Array): number {
  const n = count(counts);
  if (n === 0) return NaN;
  let sum = 0;
  for (let i = 0; i < counts.length; i++) if (counts[i] !== 0) sum += counts[i]! * bucketValue(i);
  return sum / n;
}

/** Representative value of the lowest non-empty bucket (= percentile 0). NaN when empty. */
export function min(counts: Uint32Array): number {
  checkCounts(counts);
  for (let i = 0; i < counts.length; i++) if (counts[i] !== 0) return bucketValue(i);
  return NaN;
}

/** Representative value of the highest non-empty bucket (= percentile 100). NaN when empty. */
export function max(counts: Uint32Array): number {
  checkCounts(counts);
  for (let i = counts.length - 1; i >= 0; i--) if (counts[i] !== 0) return bucketValue(i);
  return NaN;
}

/** Adds every bucket of `from` into `into` (e.g. per-stream histograms into a test total). */
export function merge(into: Uint32Array, from: Uint32Array): void {
  if (into.length !== HIST_BUCKETS) throw new RangeError(`histogram has ${into.length} buckets, expected ${HIST_BUCKETS}`);
  checkCounts(from);
  for (let i = 0; i < from.length; i++) into[i]! += from[i]!;
}
