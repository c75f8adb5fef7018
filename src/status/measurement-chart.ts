import { escapeXml, lineChart } from "../report/svg-charts.ts";
import { formatMicroseconds } from "../report/text.ts";
import { formatBits } from "../units.ts";
import { LIVE_CHART_POINTS, LIVE_CHART_SIZE, thinPoints } from "./live-chart.ts";
import type { MeasurementView } from "./schema.ts";

const GAP = 10;

/**
 * GET /measurement.svg: a measurement made of several tests (--responsiveness) on one time axis, its load's
 * throughput above its probe's round trip (TCP p50/p90/p99, UDP pings' p50), both from /status's `measurement`, drawn by the report's
 * chart code. `data-probe` and `data-load` say how many samples each holds, `data-phase` the phase now.
 */
export function measurementSvg(m: MeasurementView): string {
  const tcp = m.probe.filter((s) => s.transport === "tcp"), udp = m.probe.filter((s) => s.transport === "udp");
  const end = Math.max(0, ...m.probe.map((s) => s.t), ...m.load.map((s) => s.t));
  const common = { ...LIVE_CHART_SIZE, xLabel: `seconds since the ${m.kind} run started`, dots: false, xDomain: [0, end] as const, xFormat: (v: number) => v.toFixed(1) };
  const throughput = lineChart({
    ...common,
    title: `${m.kind}: the load's throughput, ${m.phase} phase`,
    yLabel: "bit/s",
    format: (v) => formatBits(v),
    series: [{ name: "load", points: thinPoints(m.load.map((s) => ({ x: s.t, y: s.bitsPerSecond })), LIVE_CHART_POINTS) }],
  });
  const latency = lineChart({
    ...common,
    title: `${m.kind}: the probe's round trip, ${m.phase} phase`,
    yLabel: "round trip",
    format: formatMicroseconds,
    series: [
      ...(["p50", "p90", "p99"] as const).map((q) => ({ name: `TCP ${q}`, points: thinPoints(tcp.map((s) => ({ x: s.t, y: s[q] })), LIVE_CHART_POINTS) })),
      ...(udp.length ? [{ name: "UDP ping p50", points: thinPoints(udp.map((s) => ({ x: s.t, y: s.p50 })), LIVE_CHART_POINTS) }] : []),
    ],
  });
  const { width, height } = LIVE_CHART_SIZE;
  const total = 2 * height + GAP;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${total}" viewBox="0 0 ${width} ${total}" data-phase="${escapeXml(m.phase)}" data-probe="${m.probe.length}" data-load="${m.load.length}">` +
    throughput + latency.replace("<svg ", `<svg y="${height + GAP}" `) + "</svg>";
}
