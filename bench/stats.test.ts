import { describe, expect, test } from "bun:test";
import { max, median, pairedRatios } from "./stats.ts";

describe("median", () => {
  test("odd count takes the middle of the sorted samples", () => {
    expect(median([9, 1, 5])).toBe(5);
  });
  test("even count averages the two middle samples", () => {
    expect(median([4, 1, 3, 2])).toBe(2.5);
  });
  test("no samples, no median", () => {
    expect(median([])).toBeUndefined();
    expect(max([])).toBeUndefined();
  });
  test("does not reorder its input", () => {
    const xs = [3, 1, 2];
    median(xs);
    expect(xs).toEqual([3, 1, 2]);
  });
});

describe("pairedRatios", () => {
  test("divides repeat by repeat and drops repeats where either side failed", () => {
    expect(pairedRatios([2, undefined, 9, 4], [1, 3, undefined, 8])).toEqual([2, 0.5]);
  });
  test("a zero denominator gives no ratio rather than Infinity", () => {
    expect(pairedRatios([1], [0])).toEqual([]);
  });
});
