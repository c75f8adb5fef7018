import { describe, expect, test } from "bun:test";
import { StandIn, tcp } from "../../tests/fixtures/status/stand-in-run.ts";
import type { Figures, Interval } from "../report/result.ts";
import { MAX_CHART_STREAMS } from "../report/svg-charts.ts";
import { LIVE_CHART_POINTS, liveChartSvg, thinPoints } from "./live-chart.ts";
import { TestRunSource } from "./test-run-source.ts";

const f = (bps: number): Figures => ({ bytes: bps / 8, seconds: 1, throughput_bps: bps });

/**
 * A loopback interval of `n` flows numbered as the engine numbers them (receivers 0..n-1, senders n..2n-1): flow s
 * sends (s + 1) Mbit/s and receives a tenth less.
 */
function loopbackInterval(n: number, k: number): Interval {
  const streams = Array.from({ length: n }, (_, s) => [
    { id: n + s, side: "send" as const, ...f((s + 1) * 1e6) },
    { id: s, side: "recv" as const, ...f((s + 1) * 0.9e6 + k) },
  ]).flat();
  const sum = streams.filter((s) => s.side === "recv").reduce((a, s) => a + s.throughput_bps, 0);
  return { start: k, end: k + 1, phase: "measuring", sum: f(sum), streams };
}

function running(n: number, intervals: number): TestRunSource {
  const source = new TestRunSource({ mode: "loopback", role: "both" });
  const run = new StandIn(tcp);
  source.add(run);
  run.setPhase("measuring");
  for (let k = 0; k < intervals; k++) run.interval(loopbackInterval(n, k));
  return source;
}

const paths = (svg: string) => [...svg.matchAll(/<path d="([^"]+)"[^>]*><title>([^<]+)<\/title>/g)].map((m) => ({ name: m[2]!, d: m[1]! }));

describe("the live chart", () => {
  test("two streams: the total and each receiving stream, as the report names them; senders left out", () => {
    const svg = liveChartSvg(running(2, 5));
    expect(svg).toMatch(/^<svg data-test="1" data-points="5" data-streams="2" /);
    expect(paths(svg).map((p) => p.name)).toEqual(["total", "recv 0", "recv 1"]);
    expect(svg).toContain("test 1: throughput in total and per stream, measuring");
    expect(svg).not.toContain(" of ");
    // Five points each: one M and four L.
    for (const p of paths(svg)) expect(p.d.split(" ").length).toBe(5);
  });

  test("one stream: the total alone (its only stream would draw the same line)", () => {
    const svg = liveChartSvg(running(1, 3));
    expect(paths(svg).map((p) => p.name)).toEqual(["total"]);
    expect(svg).toContain('data-streams="0"');
  });

  test("more streams than the report keeps: the first MAX_CHART_STREAMS drawn, the title says how many of how many", () => {
    const svg = liveChartSvg(running(MAX_CHART_STREAMS + 4, 2));
    expect(paths(svg)).toHaveLength(1 + MAX_CHART_STREAMS);
    expect(svg).toContain(`(${MAX_CHART_STREAMS} of ${MAX_CHART_STREAMS + 4} streams)`);
  });

  test("a long test is thinned to LIVE_CHART_POINTS per line", () => {
    const svg = liveChartSvg(running(2, 900));
    expect(svg).toContain(`data-points="${LIVE_CHART_POINTS}"`);
    for (const p of paths(svg)) expect(p.d.split(" ").length).toBe(LIVE_CHART_POINTS);
  });
});

describe("thinPoints", () => {
  test("groups neighbours and averages them; x is each group's last", () => {
    const pts = [1, 2, 3, 4, 5].map((x) => ({ x, y: x * 10 }));
    expect(thinPoints(pts, 2)).toEqual([{ x: 3, y: 20 }, { x: 5, y: 45 }]);
    expect(thinPoints(pts, 5)).toEqual(pts);
    expect(thinPoints([], 3)).toEqual([]);
  });
});
