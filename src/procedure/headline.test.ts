import { describe, expect, test } from "bun:test";
import { aggregate, headlineOf } from "./headline.ts";
import { bestPoint, repeatText, sweepTable, type PointOutcome } from "./report.ts";
import type { Results } from "../report/result.ts";

describe("median and spread of the headline figures", () => {
  test("three runs: median, min, max and (max - min) / median per figure; a figure some runs lack counts over the rest", () => {
    const agg = aggregate([
      { throughput_bps: 90, cpu_busy_percent: 10, latency_p99_us: 5 },
      { throughput_bps: 110, cpu_busy_percent: 30 },
      { throughput_bps: 100, cpu_busy_percent: 20 },
    ]);
    expect(agg.throughput_bps).toEqual({ n: 3, median: 100, min: 90, max: 110, spread_percent: 20 });
    expect(agg.cpu_busy_percent).toEqual({ n: 3, median: 20, min: 10, max: 30, spread_percent: 100 });
    expect(agg.latency_p99_us).toEqual({ n: 1, median: 5, min: 5, max: 5, spread_percent: 0 });
    expect(agg.packets_per_second).toBeUndefined();
  });

  test("the headline of a run is its printed summary figures and CPU, copied", () => {
    const r = {
      summary: { bytes: 1, seconds: 1, throughput_bps: 8, packets_per_second: 3, loss_percent: 0.5, transactions_per_second: 7, latency_us: { mean: 1, min: 1, max: 9, p50: 2, p90: 3, p99: 4, p999: 5 } },
      cpu: { busy_percent: 12 },
    } as unknown as Results;
    expect(headlineOf(r)).toEqual({ throughput_bps: 8, packets_per_second: 3, loss_percent: 0.5, transactions_per_second: 7, latency_p50_us: 2, latency_p99_us: 4, cpu_busy_percent: 12 });
  });

  test("the sweep table marks the point with the highest median", () => {
    const pt = (streams: string, bps: number[]): PointOutcome => ({ point: { streams }, runs: bps.map(() => ({}) as Results), aggregate: aggregate(bps.map((b) => ({ throughput_bps: b }))) });
    const points = [pt("1", [1e9, 2e9]), pt("2", [3e9, 3e9, 9e9]), pt("4", [2e9])];
    expect(bestPoint(points, "throughput_bps")).toBe(1);
    const lines = sweepTable(points, "throughput_bps", 1).split("\n");
    expect(lines[1]).toMatch(/throughput range \(% of median\)$/);
    expect(lines[3]).toMatch(/^\*\s+streams=2\s+3\s+3(\.00)? Gbit\/s\s+200\.0 %$/);
    expect(lines[2]).toMatch(/^ \s+streams=1\s+2\s+1\.50 Gbit\/s\s+66\.7 %$/);
  });

  test("--repeat prints the range as a range, never as ± (which reads as half of it)", () => {
    const text = repeatText([{}, {}, {}] as Results[], aggregate([1e9, 2e9, 3e9].map((b) => ({ throughput_bps: b }))));
    expect(text).toContain("median and range (min – max; the range, max − min, as % of the median)");
    expect(text).toMatch(/^  throughput\s+2(\.00)? Gbit\/s   1(\.00)? Gbit\/s – 3(\.00)? Gbit\/s \(range 100\.0 % of the median\)$/m);
    expect(text).not.toContain("±");
  });
});
