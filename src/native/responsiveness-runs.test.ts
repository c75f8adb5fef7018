import { describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Responsiveness, ResponsivenessPhase } from "./responsiveness-report.ts";
import { bestResponsivePoint, responsivenessCompareRows, responsivenessHeadline, responsivenessSpread, responsivenessSpreadText, responsivenessSweepTable, type ResponsivenessPoint } from "./responsiveness-runs.ts";
import { appendHistory, readHistory } from "../procedure/history.ts";
import { testKind } from "../procedure/test-kind.ts";

const phase = (p50: number, bps: number): ResponsivenessPhase => ({
  throughput_bps: bps, upload_bps: bps, download_bps: 0, latency_us: { p50, p90: p50 * 2, p99: p50 * 4 }, transactions: 100, rpm: 60e6 / p50, queueing_delay_us: {},
});
const run = (idle: number, loaded: number, bps: number): Responsiveness => ({
  idle: phase(idle, 0), upload: phase(loaded, bps), download: phase(loaded, bps), bidir: phase(loaded * 2, bps * 2), rpm: 60e6 / (loaded * 2), evidence: [],
});

describe("--repeat over --responsiveness runs", () => {
  const runs = [run(100, 40_000, 47e6), run(120, 50_000, 48e6), run(200, 60_000, 46e6)];

  test("each phase's figures: median, min, max and the range as % of the median", () => {
    const s = responsivenessSpread(runs);
    expect(s.upload!.latency_p50_us).toEqual({ n: 3, median: 50_000, min: 40_000, max: 60_000, spread_percent: 40 });
    expect(s.bidir!.latency_p99_us!.median).toBe(400_000);
    expect(s.bidir!.throughput_bps).toEqual({ n: 3, median: 94e6, min: 92e6, max: 96e6, spread_percent: (4 / 94) * 100 });
    // 60 s / 100 ms, the median bidir p50
    expect(s.bidir!.rpm!.median).toBe(600);
    // Idle carries no load: no throughput figure.
    expect(s.idle!.throughput_bps).toBeUndefined();
    expect(s.idle!.latency_p50_us!.median).toBe(120);
  });

  test("a phase only some runs reached counts over those (an interrupted run lacks the later ones)", () => {
    const partial: Responsiveness = { idle: phase(300, 0), evidence: [] };
    const s = responsivenessSpread([...runs, partial]);
    expect(s.idle!.latency_p50_us!.n).toBe(4);
    expect(s.bidir!.latency_p50_us!.n).toBe(3);
  });

  test("the text: one row per phase and figure, uncounted runs said", () => {
    const text = responsivenessSpreadText(4, 3, responsivenessSpread(runs));
    expect(text.split("\n")[0]).toStartWith("3 runs (1 interrupted, not counted)");
    expect(text).toContain("  upload    p50            50.00 ms   40.00 ms – 60.00 ms (range 40.0 % of the median)");
    expect(text).toContain("  bidir     throughput  94.0 Mbit/s");
    expect(text).not.toContain("idle      throughput");
  });
});

describe("compare and history for responsiveness runs", () => {
  test("compare: each phase's figures side by side and the change in %", () => {
    const rows = responsivenessCompareRows(run(100, 40_000, 47e6), run(100, 50_000, 47e6));
    expect(rows).toContainEqual(["upload p50", "40.00 ms", "50.00 ms", "+25.0 %"]);
    expect(rows).toContainEqual(["bidir RPM", "750", "600", "-20.0 %"]);
    expect(rows.find((r) => r[0] === "idle throughput")).toBeUndefined();
  });

  test("a phase one run lacks is n/a, no change", () => {
    const rows = responsivenessCompareRows(run(100, 40_000, 47e6), { idle: phase(100, 0), evidence: [] });
    expect(rows).toContainEqual(["bidir p50", "80.00 ms", "n/a", ""]);
  });

  test("a history line of kind responsiveness keeps its phases and reads back", () => {
    const f = join(mkdtempSync(join(tmpdir(), "anyperf-resp-")), "h.jsonl");
    const r = run(100, 40_000, 47e6);
    appendHistory(f, { v: 3, id: "r1", time: "2026-12-04T20:00:00Z", mode: "client", peer: "10.0.0.2", transport: "tcp", test: "responsiveness", results: responsivenessHeadline(r), responsiveness: r });
    const [back] = readHistory(f);
    expect(testKind(back!)).toBe("responsiveness");
    expect(back!.responsiveness).toEqual(r);
    expect(back!.results).toEqual({ throughput_bps: 94e6, latency_p50_us: 80_000, latency_p99_us: 320_000 });
  });
});

describe("the UDP pings across runs", () => {
  const pinged = (r: Responsiveness, p50: number): Responsiveness => ({ ...r, upload: { ...r.upload!, udp_latency_us: { p50, p90: p50, p99: p50 }, udp_pings: 1400 } });

  test("--repeat: their p50's spread where runs have it; compare: a row where either run has it, none where neither does", () => {
    const s = responsivenessSpread([pinged(run(100, 40_000, 47e6), 41_000), pinged(run(100, 50_000, 47e6), 52_000), run(100, 45_000, 47e6)]);
    expect(s.upload!.udp_p50_us).toEqual({ n: 2, median: 46_500, min: 41_000, max: 52_000, spread_percent: (11_000 / 46_500) * 100 });
    expect(s.download!.udp_p50_us).toBeUndefined();
    const rows = responsivenessCompareRows(pinged(run(100, 40_000, 47e6), 41_000), run(100, 40_000, 47e6));
    expect(rows).toContainEqual(["upload UDP p50", "41.00 ms", "n/a", ""]);
    expect(rows.find((r) => r[0] === "download UDP p50")).toBeUndefined();
  });
});

describe("--sweep over --responsiveness runs", () => {
  const at = (point: Record<string, string>, runs: Responsiveness[]): ResponsivenessPoint => ({
    point,
    runs: runs.map((r) => ({ started_at: "2026-12-05T08:00:00Z", interrupted: false, responsiveness: r })),
    aggregate: responsivenessSpread(runs),
  });
  // A paced load below the path keeps the queue empty: the most responsive point, though it moves less.
  const points = [at({ rate: "2M" }, [run(100, 200, 16e6), run(100, 300, 16e6)]), at({ rate: "20M" }, [run(100, 40_000, 47e6), run(100, 60_000, 47e6)])];

  test("the best point is the one with the highest median RPM, not the most throughput", () => {
    expect(bestResponsivePoint(points)).toBe(0);
    expect(bestResponsivePoint([at({ rate: "20M" }, [run(100, 40_000, 47e6)]), at({ rate: "2M" }, [run(100, 200, 16e6)])])).toBe(1);
    expect(bestResponsivePoint([at({ rate: "2M" }, [{ idle: phase(100, 0), evidence: [] }])])).toBe(-1);
  });

  test("the table: one row per point, the probe's p50 per phase, bidir's throughput and RPM as medians, the best marked", () => {
    const lines = responsivenessSweepTable(points, 0).split("\n");
    expect(lines[0]).toStartWith("sweep: medians per point");
    expect(lines[1]).toMatch(/^ +point +runs +idle p50 +upload p50 +download p50 +bidir p50 +bidir throughput +RPM +RPM range \(% of median\)$/);
    // rate=2M: upload p50 median 250 µs, bidir 500 µs, bidir throughput 32 Mbit/s; RPM the median of the runs' RPMs,
    // 60 s / 400 µs and 60 s / 600 µs: 125000, its range 50000 = 40 % of it.
    expect(lines[2]).toMatch(/^\* +rate=2M +2 +100\.0 µs +250\.0 µs +250\.0 µs +500\.0 µs +32\.0 Mbit\/s +125000 +40\.0 %$/);
    expect(lines[3]).toMatch(/^ +rate=20M +2 +100\.0 µs +50\.00 ms +50\.00 ms +100\.00 ms +94\.0 Mbit\/s +625 +40\.0 %$/);
  });
});
