import { describe, expect, test } from "bun:test";
import { HIST_BUCKETS } from "../counters.ts";
import { record } from "../histogram.ts";
import { cumulativeBuckets, LATENCY_BUCKETS_SECONDS } from "./latency-buckets.ts";

describe("cumulativeBuckets", () => {
  test("1-2-5 bounds from 1 µs to 10 s, increasing", () => {
    expect(LATENCY_BUCKETS_SECONDS[0]).toBe(1e-6);
    expect(LATENCY_BUCKETS_SECONDS.at(-1)).toBe(10);
    for (let i = 1; i < LATENCY_BUCKETS_SECONDS.length; i++) expect(LATENCY_BUCKETS_SECONDS[i]!).toBeGreaterThan(LATENCY_BUCKETS_SECONDS[i - 1]!);
  });

  test("samples fall under the first bound at or above them; counts are cumulative and end at the total", () => {
    const h = new Uint32Array(HIST_BUCKETS);
    // 0.5 µs, exactly 20 µs (a fine edge: counted under 50 µs's bucket, not 20's), 19.9 µs, 150 µs x3, 30 s (beyond 10 s).
    for (const us of [0.5, 20, 19.9, 150, 150, 150, 30e6]) record(h, us);
    const c = cumulativeBuckets(h);
    const at = (s: number) => c[LATENCY_BUCKETS_SECONDS.indexOf(s)];
    expect(at(1e-6)).toBe(1);
    expect(at(1e-5)).toBe(1);
    expect(at(2e-5)).toBe(2);
    expect(at(5e-5)).toBe(3);
    expect(at(1e-4)).toBe(3);
    expect(at(2e-4)).toBe(6);
    expect(at(10)).toBe(6);
    expect(c.length).toBe(LATENCY_BUCKETS_SECONDS.length);
  });

  test("an empty histogram is all zeros", () => {
    expect(cumulativeBuckets(new Uint32Array(HIST_BUCKETS)).every((n) => n === 0)).toBe(true);
  });
});
