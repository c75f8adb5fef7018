import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { HIST_BUCKETS } from "./counters.ts";
import {
  bucketHigh,
  bucketLow,
  bucketOf,
  bucketValue,
  count,
  max,
  mean,
  merge,
  min,
  percentile,
  percentiles,
  record,
} from "./histogram.ts";

const LAST = HIST_BUCKETS - 1;

function histOf(samples: Iterable<number>): Uint32Array {
  const h = new Uint32Array(HIST_BUCKETS);
  for (const us of samples) record(h, us);
  return h;
}

function range(from: number, to: number): number[] {
  const out: number[] = [];
  for (let i = from; i <= to; i++) out.push(i);
  return out;
}

describe("bucket layout", () => {
  test("hand-computed buckets", () => {
    // 0 µs: unit 0, linear region.
    expect(bucketOf(0)).toBe(0);
    // 3.99 µs = 127.68 units -> unit 127, last linear bucket.
    expect(bucketOf(3.99)).toBe(127);
    // 4 µs = 128 units: msb 7, shift 1, 64*1 + (128 >> 1) = 128.
    expect(bucketOf(4)).toBe(128);
    // 1000 µs = 32000 units: msb 14, shift 8, 64*8 + (32000 >> 8 = 125) = 637, edges 125*256/32 .. 126*256/32.
    expect(bucketOf(1000)).toBe(637);
    expect(bucketLow(637)).toBe(1000);
    expect(bucketHigh(637)).toBe(1008);
    expect(bucketValue(637)).toBe(1004);
    // 200 s = 2e8 µs = 6.4e9 units (> 2^32, slow path): msb 32, shift 26, 64*26 + floor(6.4e9 / 2^26 = 95.37) = 1759.
    expect(bucketOf(2e8)).toBe(1759);
    expect(bucketLow(1759)).toBe((95 * 2 ** 26) / 32);
    expect(bucketHigh(1759)).toBe((96 * 2 ** 26) / 32);
    // 2^32 units exactly is the first value on the slow path and must continue where the fast path stopped.
    expect(bucketOf(2 ** 32 / 32 - 1 / 32)).toBe(1727);
    expect(bucketOf(2 ** 32 / 32)).toBe(1728);
  });

  test("edges are contiguous, increasing, start at 0 and cover at least 100 s", () => {
    expect(bucketLow(0)).toBe(0);
    for (let i = 0; i < LAST; i++) {
      expect(bucketLow(i)).toBeLessThan(bucketHigh(i));
      expect(bucketHigh(i)).toBe(bucketLow(i + 1));
    }
    expect(bucketHigh(LAST)).toBeGreaterThanOrEqual(100e6);
  });

  test("every bucket maps its own edges back to itself", () => {
    for (let i = 0; i <= LAST; i++) {
      expect(bucketOf(bucketLow(i))).toBe(i);
      const below = bucketHigh(i) * (1 - 2 ** -52); // the largest double under the upper edge (edges are >= 1/32)
      expect(bucketOf(below)).toBe(i);
      expect(bucketValue(i)).toBe((bucketLow(i) + bucketHigh(i)) / 2);
    }
  });

  test("bucketOf is monotonic over the whole range", () => {
    let prev = 0;
    for (let us = 1e-3; us < 1e11; us *= 1.0007) {
      const b = bucketOf(us);
      expect(b).toBeGreaterThanOrEqual(prev);
      prev = b;
    }
    expect(prev).toBe(LAST);
  });

  test("resolution: width <= 0.1 us below 6 us", () => {
    for (let i = 0; bucketLow(i) < 6; i++) expect(bucketHigh(i) - bucketLow(i)).toBeLessThanOrEqual(0.1);
  });

  test("value lies inside its bucket; error <= 0.05 us below 6 us and <= 1 % above, up to 100 s", () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1e8, noNaN: true }), (us) => {
        const b = bucketOf(us);
        expect(bucketLow(b)).toBeLessThanOrEqual(us);
        expect(us).toBeLessThan(bucketHigh(b));
        const err = Math.abs(bucketValue(b) - us);
        if (us < 6) expect(err).toBeLessThanOrEqual(0.05);
        else expect(err / us).toBeLessThanOrEqual(0.01);
      }),
      { numRuns: 20000 },
    );
    // Log-uniform sweep so that every decade gets the same attention as the random draw above gives the top one.
    for (let us = 6; us <= 1e8; us *= 1.0013) {
      expect(Math.abs(bucketValue(bucketOf(us)) - us) / us).toBeLessThanOrEqual(0.01);
    }
  });

  test("out of range values clamp", () => {
    expect(bucketOf(1e12)).toBe(LAST);
    expect(bucketOf(Infinity)).toBe(LAST);
    expect(bucketOf(Number.MAX_VALUE)).toBe(LAST);
    expect(bucketOf(-1)).toBe(0);
    expect(bucketOf(-Infinity)).toBe(0);
    expect(bucketOf(NaN)).toBe(0);
  });

  test("bad bucket index is refused", () => {
    expect(() => bucketLow(-1)).toThrow(RangeError);
    expect(() => bucketHigh(HIST_BUCKETS)).toThrow(RangeError);
    expect(() => bucketValue(1.5)).toThrow(RangeError);
  });
});

describe("statistics", () => {
  test("uniform 1..1000 us", () => {
    const h = histOf(range(1, 1000));
    expect(count(h)).toBe(1000);
    // Nearest rank: p50 is the 500th sample (500 us), p99 the 990th (990 us); each reported as its bucket value.
    expect(percentile(h, 50)).toBe(bucketValue(bucketOf(500)));
    expect(percentile(h, 99)).toBe(bucketValue(bucketOf(990)));
    expect(Math.abs(percentile(h, 50) - 500) / 500).toBeLessThanOrEqual(0.01);
    expect(Math.abs(percentile(h, 99) - 990) / 990).toBeLessThanOrEqual(0.01);
    expect(percentile(h, 0)).toBe(bucketValue(bucketOf(1)));
    expect(percentile(h, 100)).toBe(bucketValue(bucketOf(1000)));
    expect(min(h)).toBe(percentile(h, 0));
    expect(max(h)).toBe(percentile(h, 100));
    expect(Math.abs(mean(h) - 500.5) / 500.5).toBeLessThanOrEqual(0.01);
    // p outside 0..100 is clamped.
    expect(percentile(h, -5)).toBe(min(h));
    expect(percentile(h, 150)).toBe(max(h));
  });

  test("nearest rank is not pushed up by rounding (7 % of 100 samples is the 7th)", () => {
    const h = histOf(range(1, 100).map((i) => i * 10)); // distinct buckets: 10, 20, ... 1000 us
    expect(percentile(h, 7)).toBe(bucketValue(bucketOf(70)));
    expect(percentile(h, 57)).toBe(bucketValue(bucketOf(570)));
    expect(percentile(h, 99.9)).toBe(bucketValue(bucketOf(1000)));
    expect(percentile(h, 0.5)).toBe(bucketValue(bucketOf(10)));
    // 1.1 · 3000 / 100 evaluates to 33.00000000000001 in doubles; the rank is still 33.
    const g = histOf(range(1, 3000).map((i) => i * 10));
    expect(percentile(g, 1.1)).toBe(bucketValue(bucketOf(330)));
    expect(percentiles(g, [1.1])).toEqual([bucketValue(bucketOf(330))]);
  });

  test("a single sample is every percentile", () => {
    const h = histOf([42]);
    for (const p of [0, 1, 50, 99, 100]) expect(percentile(h, p)).toBe(bucketValue(bucketOf(42)));
    expect(mean(h)).toBe(bucketValue(bucketOf(42)));
  });

  test("percentiles() equals percentile() for each p, in the caller's order", () => {
    const samples = range(1, 5000).map((i) => (i * 7919) % 100003); // spread over 0..100 ms
    const h = histOf(samples);
    const ps = [99.99, 50, 0, 90, 99, 100, 25, 50];
    expect(percentiles(h, ps)).toEqual(ps.map((p) => percentile(h, p)));
    expect(percentiles(h, [NaN, 50])).toEqual([NaN, percentile(h, 50)]);
  });

  test("mean weights each bucket by its count", () => {
    const h = histOf([10, 10, 10, 1000]);
    const expected = (3 * bucketValue(bucketOf(10)) + bucketValue(bucketOf(1000))) / 4;
    expect(mean(h)).toBe(expected);
  });

  test("empty histogram", () => {
    for (const h of [new Uint32Array(HIST_BUCKETS), new Uint32Array(0)]) {
      expect(count(h)).toBe(0);
      expect(percentile(h, 50)).toBeNaN();
      expect(percentiles(h, [50, 99])).toEqual([NaN, NaN]);
      expect(mean(h)).toBeNaN();
      expect(min(h)).toBeNaN();
      expect(max(h)).toBeNaN();
    }
    expect(percentile(histOf([5]), NaN)).toBeNaN();
  });

  test("merge adds bucket by bucket", () => {
    const a = range(1, 300);
    const b = range(250, 900).map((x) => x * 3);
    const ha = histOf(a);
    merge(ha, histOf(b));
    const all = histOf([...a, ...b]);
    expect(Array.from(ha)).toEqual(Array.from(all));
    merge(ha, new Uint32Array(0)); // a snapshot taken without histograms adds nothing
    expect(Array.from(ha)).toEqual(Array.from(all));
  });

  test("histograms of the wrong size are refused", () => {
    const whole = new Uint32Array(HIST_BUCKETS * 2);
    expect(() => count(whole)).toThrow(RangeError);
    expect(() => percentile(whole, 50)).toThrow(RangeError);
    expect(() => merge(new Uint32Array(10), new Uint32Array(HIST_BUCKETS))).toThrow(RangeError);
    expect(() => merge(new Uint32Array(HIST_BUCKETS), whole)).toThrow(RangeError);
  });

  test("works on a view into the shared counters buffer", () => {
    const sab = new SharedArrayBuffer(3 * HIST_BUCKETS * 4);
    const stream1 = new Uint32Array(sab, HIST_BUCKETS * 4, HIST_BUCKETS);
    record(stream1, 100);
    record(stream1, 300);
    const whole = new Uint32Array(sab);
    expect(whole[HIST_BUCKETS + bucketOf(100)]).toBe(1);
    expect(whole[bucketOf(100)]).toBe(0);
    expect(percentile(stream1, 100)).toBe(bucketValue(bucketOf(300)));
  });
});
