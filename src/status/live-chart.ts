import { formatBits } from "../units.ts";
import { type ChartPoint, lineChart } from "../report/svg-charts.ts";
import { shownTest } from "./document.ts";
import type { StatusSource } from "./source.ts";

export const LIVE_CHART_SIZE = { width: 800, height: 260 } as const;

/** Points drawn per line: a line of 900 intervals is merged to this many (the chart is 800 px wide). */
export const LIVE_CHART_POINTS = 300;

/** Neighbouring points averaged in groups, so no line has more than `max` points; x is each group's last. */
export function thinPoints(points: readonly ChartPoint[], max: number): ChartPoint[] {
  const per = Math.ceil(points.length / Math.max(1, max));
  if (per <= 1) return [...points];
  const out: ChartPoint[] = [];
  for (let i = 0; i < points.length; i += per) {
    const group = points.slice(i, i + per);
    out.push({ x: group[group.length - 1]!.x, y: group.reduce((a, p) => a + p.y, 0) / group.length });
  }
  return out;
}

/**
 * GET /chart.svg: the shown test's throughput over time, the total and (with more than one stream) each measuring
 * stream as the report names them, drawn on the server by the chart code the HTML report uses
 * (src/report/svg-charts.ts), so the live page and `anyperf report` draw a run the same way. `data-test` and
 * `data-points` say what it holds, for the page and its tests.
 */
export function liveChartSvg(source: StatusSource): string {
  const t = shownTest(source.tests());
  const points = thinPoints((t?.intervals ?? []).map((i) => ({ x: i.end, y: i.bitsPerSecond })), LIVE_CHART_POINTS);
  const perStream = t && source.streamSeries ? source.streamSeries(t.id) : { shown: [], total: 0 };
  const streams = perStream.shown.length > 1
    ? perStream.shown.map((s) => ({ name: `${s.side ?? "stream"} ${s.id}`, points: thinPoints(s.points, LIVE_CHART_POINTS) }))
    : [];
  const of = streams.length && perStream.total > streams.length ? ` (${streams.length} of ${perStream.total} streams)` : "";
  const svg = lineChart({
    ...LIVE_CHART_SIZE,
    title: t ? `test ${t.id}: throughput${streams.length ? " in total and per stream" : ""}${of}, ${t.phase}` : "no test yet",
    xLabel: "seconds since the test started",
    yLabel: "bit/s",
    format: (v) => formatBits(v),
    dots: false,
    series: t ? [{ name: "total", points }, ...streams] : [],
  });
  return svg.replace("<svg ", `<svg data-test="${t?.id ?? ""}" data-points="${points.length}" data-streams="${streams.length}" `);
}
