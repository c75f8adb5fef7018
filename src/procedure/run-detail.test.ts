import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { throughputBps } from "../formulas.ts";
import type { Interval, Results } from "../report/result.ts";
import { HISTORY_VERSION, HistoryEntry, readHistory } from "./history.ts";
import { MAX_CORES, MAX_POINTS, runDetail } from "./run-detail.ts";
import { reportHtml } from "./report-html.ts";
import { MAX_CHART_STREAMS } from "../report/svg-charts.ts";

/** A run of `n` one-second intervals and `streams` receiving streams (plus as many senders), stream s moving (s+1)·(i+1) MB in interval i. */
function run(n: number, streams: number, cores = 4): Results {
  const intervals: Interval[] = Array.from({ length: n }, (_, i) => {
    const ss = Array.from({ length: streams }, (_, s) => ({ id: s, side: "recv" as const, bytes: (s + 1) * (i + 1) * 1e6, seconds: 1, throughput_bps: (s + 1) * (i + 1) * 8e6 }));
    const tx = ss.map((s) => ({ ...s, side: "send" as const }));
    return { start: i, end: i + 1, phase: "measuring", sum: { bytes: 0, seconds: 1, throughput_bps: 0 }, streams: [...ss, ...tx] };
  });
  const perCpu = Array.from({ length: cores }, (_, cpu) => ({ cpu, user: 10.04 + cpu, system: 20.06, softirq: 5, idle: 64.9 - cpu, busy: 35.1 + cpu }));
  return {
    tool: "anyperf", version: "t", mode: "loopback", role: "both", transport: "tcp", test: "stream", started_at: "2026-12-03T10:00:00.000Z",
    interrupted: false, phases: { warmup_s: 0, measured_s: n, cooldown_s: 0 }, summary: { bytes: 1, seconds: n, throughput_bps: 1 }, totals: {},
    streams: [], intervals, cpu: { busy_percent: 40, host: { seconds: n, cores, perCpu } }, errors: [],
    diagnosis: { verdict: "receiver-cpu", evidence: ["cpu3 of the receiver was 99 % busy (softirq 60 %)"], busiest_cpu: {} },
  } as unknown as Results;
}

describe("the per-run detail of a history line (schema 2)", () => {
  test("short runs keep every interval of every receiving stream, to 3 significant digits; CPU per core to 0.1 %", () => {
    const d = runDetail(run(3, 2, 2));
    expect(d.over_time).toEqual({ t: [1, 2, 3], streams: [{ id: 0, side: "recv", bps: [8e6, 1.6e7, 2.4e7] }, { id: 1, side: "recv", bps: [1.6e7, 3.2e7, 4.8e7] }], streams_total: 2 });
    expect(d.cpu_per_core).toEqual([{ cpu: 0, user: 10, system: 20.1, softirq: 5, idle: 64.9, busy: 35.1 }, { cpu: 1, user: 11, system: 20.1, softirq: 5, idle: 63.9, busy: 36.1 }]);
    expect(d.diagnosis).toEqual({ verdict: "receiver-cpu", evidence: ["cpu3 of the receiver was 99 % busy (softirq 60 %)"] });
    expect(d.remote_cpu_per_core).toBeUndefined();
  });

  test("long runs merge neighbouring intervals: bits/s over the merged time, from their bytes (throughputBps)", () => {
    const d = runDetail(run(150, 1));
    // 150 intervals → 3 per point, 50 points; point 0 = intervals 0..2 of stream 0: (1+2+3) MB over 3 s.
    expect(d.over_time!.t).toHaveLength(50);
    expect(d.over_time!.t.slice(0, 2)).toEqual([3, 6]);
    expect(d.over_time!.streams[0]!.bps[0]).toBe(Number(throughputBps(6e6, 3).toPrecision(3)));
    expect(d.over_time!.streams[0]!.bps[49]).toBe(Number(throughputBps((148 + 149 + 150) * 1e6, 3).toPrecision(3)));
  });

  test("a line stays bounded whatever the run: 3600 intervals, 40 streams, 1024 cores", () => {
    const r = run(3600, 40, 1024);
    const d = runDetail(r);
    expect(d.over_time!.t.length).toBeLessThanOrEqual(MAX_POINTS);
    expect(d.over_time!.streams).toHaveLength(MAX_CHART_STREAMS);
    expect(d.over_time!.streams_total).toBe(40);
    expect(d.cpu_per_core).toHaveLength(MAX_CORES);
    const line = JSON.stringify(HistoryEntry.parse({ v: HISTORY_VERSION, id: "x", time: r.started_at, mode: "loopback", results: {}, detail: d }));
    expect(line.length).toBeLessThan(64 * 1024);
  });

  test("a version-1 line (the fixture, written before detail was kept) still reads, and the report says it has no detail", () => {
    const [old] = readHistory(join(import.meta.dir, "..", "..", "tests", "fixtures", "history", "v1.jsonl"));
    expect(old).toMatchObject({ v: 1, id: "5f3a9c1e", results: { throughput_bps: 41230000000 } });
    expect(old!.detail).toBeUndefined();
    const html = reportHtml([old!], "v1.jsonl");
    expect(html).toContain("recorded before per-run detail was kept (history schema 1)");
    expect(html).toContain("TCP bulk: throughput by run");
  });
});
