/**
 * A responsiveness run's section of the HTML report: the probe's latency per phase (p50, p90, p99 over idle, upload,
 * download, bidir) and the load's throughput per phase, then the queue lines. Lines, not bars, for the latency: the
 * three percentiles per phase read as one curve each, and how far the loaded phases rise over idle is the point.
 */
import { barChart, escapeXml, lineChart } from "../report/svg-charts.ts";
import { formatMicroseconds } from "../report/text.ts";
import { formatBits } from "../units.ts";
import { LOADED_PHASES, type Responsiveness } from "../native/responsiveness-report.ts";
import { PHASES } from "../native/responsiveness-runs.ts";

export function responsivenessCharts(r: Responsiveness): string {
  const measured = PHASES.flatMap((name, i) => (r[name] ? [{ name, i, p: r[name]! }] : []));
  if (measured.length === 0) return "<p>no phase measured (interrupted before the idle probe ended)</p>";
  const pinged = measured.flatMap(({ i, p }) => (p.udp_latency_us ? [{ x: i, y: p.udp_latency_us.p50 }] : []));
  const latency = lineChart({
    title: `Probe latency per phase (TCP 1-byte request/response${pinged.length ? ", UDP pings" : ""})`,
    xLabel: "phase",
    yLabel: "µs",
    xFormat: (v) => PHASES[v] ?? "",
    format: formatMicroseconds,
    series: [
      ...(["p50", "p90", "p99"] as const).map((q) => ({ name: q, points: measured.map(({ i, p }) => ({ x: i, y: p.latency_us[q] })) })),
      ...(pinged.length ? [{ name: "UDP pings p50", points: pinged }] : []),
    ],
  });
  const loaded = measured.filter(({ name }) => (LOADED_PHASES as readonly string[]).includes(name));
  const throughput = loaded.length
    ? barChart({ title: "Load throughput per phase", yLabel: "bit/s", format: (v) => formatBits(v), bars: loaded.map(({ name, p }) => ({ label: name, value: p.throughput_bps })) })
    : "";
  const rpm = r.rpm === undefined ? "" : `<p>${escapeXml(`responsiveness ${Math.round(r.rpm)} RPM (bidir: 60 s ÷ the probe's median round trip, both directions loaded)`)}</p>`;
  const queue = r.evidence.length ? `<p class="diagnosis">${r.evidence.map((e) => escapeXml(`queue: ${e}`)).join("<br>")}</p>` : "";
  return `${rpm}${latency}${throughput}${queue}`;
}
