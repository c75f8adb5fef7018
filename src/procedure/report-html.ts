import { formatBits } from "../units.ts";
import { barChart, escapeXml, lineChart, type Bar } from "../report/svg-charts.ts";
import { coresChart } from "../report/cores-chart.ts";
import type { RunDetail } from "./run-detail.ts";
import { aggregate, HEADLINE_KEYS, primaryKey } from "./headline.ts";
import type { HistoryEntry } from "./history.ts";
import { pointLabel } from "./options.ts";
import { formatFigure, LABELS } from "./report.ts";
import { testKind } from "./test-kind.ts";
import { formatMicroseconds } from "../report/text.ts";
import { responsivenessCharts } from "./responsiveness-charts.ts";

/**
 * The report of `anyperf report`: one HTML file, styles and charts inline, no script and no URL, so it opens
 * offline and can be mailed. Across runs, one set of charts per kind of test (a TCP bulk run's throughput and an RR
 * run's are never on one line, nor RR's transactions/s and CRR's): throughput or transactions/s by run, latency p50,
 * p99 and p99.9 by run and each run's latency CDF for request/response, CPU busy by run, and each sweep's curve with
 * its repeats' min–max. Per run (history schema 2 lines; older ones have only their figures): throughput over time
 * per stream, CPU per core by mode at each end, and the diagnosis; per responsiveness run (schema 3), the probe's
 * latency and the load's throughput per phase.
 */
export function reportHtml(entries: readonly HistoryEntry[], source: string): string {
  const charts: string[] = [];
  const runs = entries.map((e, i) => ({ e, n: i + 1, kind: testKind(e) }));
  for (const kind of [...new Set(runs.map((r) => r.kind))]) charts.push(...kindCharts(kind, runs.filter((r) => r.kind === kind)));
  const cpu = runs.flatMap(({ e, n }) => (e.results.cpu_busy_percent === undefined ? [] : [{ label: String(n), value: e.results.cpu_busy_percent }]));
  if (cpu.length) charts.push(barChart({ title: "CPU busy by run", yLabel: "% of all cores", xLabel: "run (order in the history)", bars: cpu }));
  for (const s of sweeps(entries)) charts.push(s);  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>anyperf report</title>
<style>body{font-family:sans-serif;margin:16px;color:#222}table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}td:nth-child(-n+7),td:nth-last-child(-n+2),th{text-align:left}.charts svg{margin:4px;border:1px solid #eee}.failed{color:#b00}.run{margin:12px 0;border-top:1px solid #ccc}.run h3{font-size:14px}</style>
</head><body>
<h1>anyperf report</h1>
<p>${entries.length} run${entries.length === 1 ? "" : "s"} from ${escapeXml(source)}</p>
<div class="charts">${charts.join("\n")}</div>
<h2>Runs</h2>
${runsTable(entries)}
<h2>Each run</h2>
${entries.map(runSection).join("\n")}
</body></html>
`;
}

interface KindRun {
  e: HistoryEntry;
  /** The run's number: its order in the history, the x of every by-run chart and the first column of the table. */
  n: number;
  kind: string;
}

/** Runs of one request/response kind drawn in its latency CDF: the most recent, so the lines stay apart. */
const CDF_RUNS = 6;
const RUN_AXIS = "run (order in the history)";

/** The by-run charts of one kind of test: its ranking figure, and for request/response its latency. */
function kindCharts(kind: string, runs: readonly KindRun[]): string[] {
  const out: string[] = [];
  const byRun = (value: (e: HistoryEntry) => number | undefined) => runs.flatMap(({ e, n }) => (value(e) === undefined ? [] : [{ x: n, y: value(e)! }]));
  const tput = byRun((e) => e.results.throughput_bps);
  // A responsiveness run's headline is its bidir phase: the load's throughput and the probe's latency beside it.
  const test = runs[0]!.e.test;
  if ((test === "stream" || test === "responsiveness") && tput.length) out.push(lineChart({ title: `${kind}: throughput by run`, xLabel: RUN_AXIS, yLabel: "bit/s", format: (v) => formatBits(v), series: [{ name: "throughput", points: tput }] }));
  if (test === "stream") return out;
  const tps = byRun((e) => e.results.transactions_per_second);
  if (tps.length) out.push(lineChart({ title: `${kind}: transactions/s by run`, xLabel: RUN_AXIS, yLabel: "transactions/s", series: [{ name: "transactions/s", points: tps }] }));
  const lat = [
    { name: "p50", points: byRun((e) => e.results.latency_p50_us) },
    { name: "p99", points: byRun((e) => e.results.latency_p99_us) },
    { name: "p99.9", points: byRun((e) => e.detail?.latency_us?.p999) },
  ].filter((s) => s.points.length);
  if (lat.length) out.push(lineChart({ title: `${kind}: latency by run`, xLabel: RUN_AXIS, yLabel: "µs", series: lat }));
  const cdf = runs.filter((r) => r.e.detail?.latency_us).slice(-CDF_RUNS).map(({ e, n }) => {
    const l = e.detail!.latency_us!;
    return { name: `run ${n}`, points: [{ x: l.min, y: 0 }, { x: l.p50, y: 50 }, { x: l.p90, y: 90 }, { x: l.p99, y: 99 }, { x: l.p999, y: 99.9 }, { x: l.max, y: 100 }] };
  });
  if (cdf.length) {
    out.push(lineChart({
      title: `${kind}: latency CDF (min, p50, p90, p99, p99.9, max)`,
      xLabel: "latency (log scale)",
      yLabel: "% of transactions at or below",
      xLog: true,
      xFormat: formatMicroseconds,
      yMax: 100,
      series: cdf,
    }));
  }
  return out;
}

/** One chart per sweep (a group whose runs have a point): the ranking figure's median per point, min–max bars. */
function sweeps(entries: readonly HistoryEntry[]): string[] {
  const groups = new Map<string, HistoryEntry[]>();
  for (const e of entries) {
    if (!e.group || Object.keys(e.point).length === 0) continue;
    groups.set(e.group, [...(groups.get(e.group) ?? []), e]);
  }
  const out: string[] = [];
  for (const [group, runs] of groups) {
    // A responsiveness sweep is about latency too: its headline's p50 (the probe's, bidir) beside the load's throughput.
    const responsive = runs[0]!.test === "responsiveness";
    const keys = responsive ? (["throughput_bps", "latency_p50_us"] as const) : [primaryKey(runs[0]!.test)];
    const points = new Map<string, HistoryEntry[]>();
    for (const r of runs) points.set(pointLabel(r.point), [...(points.get(pointLabel(r.point)) ?? []), r]);
    const swept = [...new Set(runs.flatMap((r) => Object.keys(r.point)))].join(" × ");
    for (const key of keys) {
      const bars: Bar[] = [];
      for (const [label, pr] of points) {
        const s = aggregate(pr.map((r) => r.results))[key];
        if (s) bars.push({ label, value: s.median, low: s.min, high: s.max });
      }
      if (bars.length === 0) continue;
      out.push(barChart({
        title: `Sweep ${swept} (group ${group.slice(0, 8)}): median ${responsive ? "bidir " : ""}${LABELS[key]}, min–max of repeats`,
        yLabel: key === "throughput_bps" ? "bit/s" : key === "latency_p50_us" ? "round trip" : "transactions/s",
        format: key === "throughput_bps" ? (v) => formatBits(v) : key === "latency_p50_us" ? formatMicroseconds : undefined,
        width: Math.max(560, 90 * bars.length),
        bars,
      }));
    }
  }
  return out;
}

function runsTable(entries: readonly HistoryEntry[]): string {
  const keys = HEADLINE_KEYS.filter((k) => entries.some((e) => e.results[k] !== undefined));
  const p999 = entries.some((e) => e.detail?.latency_us);
  const head = ["run", "id", "time", "kind", "mode", "peer", "point", ...keys.map((k) => LABELS[k]), ...(p999 ? ["latency p99.9"] : []), "retransmits", "verdict", "notes"];
  const rows = entries.map((e, i) => {
    const notes = [...(e.interrupted ? ["interrupted"] : []), ...e.errors].join("; ");
    const d = e.detail;
    const cells = [String(i + 1), e.id, e.time, testKind(e), e.mode, e.peer ?? "", pointLabel(e.point) + (e.repeat ? ` #${e.repeat}` : ""),
      ...keys.map((k) => (e.results[k] === undefined ? "n/a" : formatFigure(k, e.results[k]!))),
      ...(p999 ? [d?.latency_us ? formatMicroseconds(d.latency_us.p999) : "n/a"] : []),
      d?.retransmits === undefined ? "n/a" : String(d.retransmits), d?.diagnosis?.verdict ?? "n/a", notes];
    return `<tr${notes ? ' class="failed"' : ""}>${cells.map((c) => `<td>${escapeXml(c)}</td>`).join("")}</tr>`;
  });
  return `<table><tr>${head.map((h) => `<th>${escapeXml(h)}</th>`).join("")}</tr>\n${rows.join("\n")}</table>`;
}

/**
 * One run: its diagnosis, its streams over time, its cores; a line from before schema 2 says it has none. A
 * responsiveness run: its phases' latency and throughput.
 */
function runSection(e: HistoryEntry): string {
  const d = e.detail;
  const head = `<h3>${escapeXml(`${e.id} · ${testKind(e)} · ${e.mode}${e.peer ? ` · ${e.peer}` : ""}${Object.keys(e.point).length ? ` · ${pointLabel(e.point)}` : ""} · ${e.time}`)}</h3>`;
  if (e.responsiveness) return `<section class="run">${head}${responsivenessCharts(e.responsiveness)}</section>`;
  if (!d) return `<section class="run">${head}<p>recorded before per-run detail was kept (history schema ${e.v})</p></section>`;
  const parts = [d.diagnosis ? `<p class="diagnosis"><b>${escapeXml(d.diagnosis.verdict)}</b>: ${d.diagnosis.evidence.map(escapeXml).join("<br>")}</p>` : "<p>no diagnosis (only two-host runs, anyperf client, are diagnosed)</p>"];
  const l = d.latency_us;
  const figures = [
    ...(l ? [`latency p50 ${formatMicroseconds(l.p50)}, p99 ${formatMicroseconds(l.p99)}, p99.9 ${formatMicroseconds(l.p999)} (min ${formatMicroseconds(l.min)}, max ${formatMicroseconds(l.max)})`] : []),
    ...(d.retransmits === undefined ? [] : [`TCP retransmits ${d.retransmits}`]),
  ];
  if (figures.length) parts.push(`<p>${escapeXml(figures.join(" · "))}</p>`);
  const o = d.over_time;
  if (o && o.streams.length) {
    parts.push(lineChart({
      title: `Throughput per stream${o.streams_total > o.streams.length ? ` (${o.streams.length} of ${o.streams_total})` : ""}`,
      xLabel: "seconds since the start",
      yLabel: "bit/s",
      format: (v) => formatBits(v),
      dots: false,
      series: o.streams.map((s) => ({ name: `${s.side} ${s.id}`, points: s.bps.map((y, i) => ({ x: o.t[i] ?? i, y })) })),
    }));
  }
  if (d.cpu_per_core) parts.push(coresChart("this end", d.cpu_per_core));
  if (d.remote_cpu_per_core) parts.push(coresChart("remote end", d.remote_cpu_per_core));
  return `<section class="run">${head}${parts.join("")}</section>`;
}
