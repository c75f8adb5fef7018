import { describe, expect, test } from "bun:test";
import { type RowInput, summarizeRow, summarizeSide } from "./aggregate.ts";

describe("summarizeSide", () => {
  test("median figure and CPU over the runs that worked; failures kept as null samples and distinct errors", () => {
    const s = summarizeSide(
      {
        label: "x",
        how: "y",
        outcomes: [
          { value: 10, cpuSeconds: 2, extra: { loss_percent: 1 } },
          { error: "boom" },
          { value: 30, cpuSeconds: 6, extra: { loss_percent: 5 } },
          { value: 20, cpuSeconds: 4, extra: { loss_percent: 3 } },
          { error: "boom" },
        ],
      },
      "median",
      4,
    );
    expect(s.samples).toEqual([10, null, 30, 20, null]);
    expect(s.figure).toBe(20);
    expect(s.cpu_percent).toBe(100);
    expect(s.extra).toEqual({ loss_percent: 3 });
    expect(s.errors).toEqual(["boom"]);
  });
  test("a run that lasted longer than T has its CPU over its own length", () => {
    const s = summarizeSide({ label: "", how: "", outcomes: [{ value: 1, cpuSeconds: 46, runSeconds: 23 }, { value: 1, cpuSeconds: 46, runSeconds: 23 }] }, "median", 3);
    expect(s.cpu_percent).toBe(200);
  });
  test("a peak figure takes the highest run", () => {
    expect(summarizeSide({ label: "", how: "", outcomes: [{ value: 5, cpuSeconds: 0 }, { value: 9, cpuSeconds: 0 }, { value: 7, cpuSeconds: 0 }] }, "max", 1).figure).toBe(9);
  });
  test("no run worked: no figure, no CPU", () => {
    const s = summarizeSide({ label: "", how: "", outcomes: [{ error: "e" }, undefined] }, "median", 1);
    expect([s.figure, s.cpu_percent, s.samples]).toEqual([null, null, [null, null]]);
  });
});

describe("summarizeRow", () => {
  const base: RowInput = {
    id: "t",
    workload: "w",
    unit: "bit/s",
    target: { kind: "ratio-at-least", value: 1.1 },
    cpuScope: "client+server",
    statistic: "median",
    reference: { label: "r", how: "", outcomes: [{ value: 10, cpuSeconds: 1 }, { value: 20, cpuSeconds: 1 }, { value: 10, cpuSeconds: 1 }] },
    anyperf: { label: "a", how: "", outcomes: [{ value: 12, cpuSeconds: 1 }, { value: 20, cpuSeconds: 1 }, { error: "x" }] },
  };
  test("ratio is the median of the paired repeats, not of the side medians", () => {
    const row = summarizeRow(base, 1);
    expect(row.ratios).toEqual([1.2, 1]);
    expect(row.ratio).toBeCloseTo(1.1, 12);
    expect(row.met).toBe(true);
    // Side medians alone would say 16 ÷ 10 = 1.6.
    expect(row.anyperf!.figure! / row.reference!.figure!).toBeCloseTo(1.6, 12);
  });
  test("a skipped row has no verdict", () => {
    expect(summarizeRow({ ...base, skipped: "netperf not installed" }, 1).met).toBeNull();
  });
  test("an absolute target without a reference is judged on anyperf's figure", () => {
    const row = summarizeRow({ ...base, reference: undefined, target: { kind: "anyperf-at-most", value: 150e6 }, statistic: "max", anyperf: { label: "a", how: "", outcomes: [{ value: 120e6, cpuSeconds: 0 }, { value: 151e6, cpuSeconds: 0 }] } }, 1);
    expect(row.ratio).toBeNull();
    expect(row.anyperf!.figure).toBe(151e6);
    expect(row.met).toBe(false);
  });
});
