import { formatBits } from "../units.ts";
import { barChart, escapeXml, lineChart, stackedBarChart, type Bar } from "../report/svg-charts.ts";
import type { RunDetail } from "./run-detail.ts";
import { aggregate, HEADLINE_KEYS, primaryKey } from "./headline.ts";
import type { HistoryEntry } from "./history.ts";
import { pointLabel } from "./options.ts";
import { formatFigure, LABELS } from "./report.ts";

/**
 * The report of `anyperf report`: one HTML file, styles and charts inline, no script and no URL, so it opens
 * offline and can be mailed. Across runs: throughput and latency by run, CPU busy by run, and each sweep's curve
 * with its repeats' min–max. Per run (history schema 2 lines; older ones have only their figures): throughput over
 * time per stream, CPU per core by mode at each end, and the diagnosis.
 */
export function reportHtml(entries: readonly HistoryEntry[], source: string): string {
  const charts: string[] = [];
  const byRun = (key: (typeof HEADLINE_KEYS)[number]) =>
    entries.flatMap((e, i) => (e.results[key] === undefined ? [] : [{ x: i + 1, y: e.results[key]! }]));
  const tput = byRun("throughput_bps");
  if (tput.length) charts.push(lineChart({ title: "Throughput by run", xLabel: "run (order in the history)", yLabel: "bit/s", format: (v) => formatBits(v), series: [{ name: "throughput", points: tput }] }));
  const tps = byRun("transactions_per_second");
  if (tps.length) charts.push(lineChart({ title: "Transactions/s by run", xLabel: "run (order in the history)", yLabel: "transactions/s", series: [{ name: "transactions/s", points: tps }] }));
  const p50 = byRun("latency_p50_us"), p99 = byRun("latency_p99_us");
  if (p50.length || p99.length) charts.push(lineChart({ title: "Latency percentiles by run", xLabel: "run (order in the history)", yLabel: "µs", series: [{ name: "p50", points: p50 }, { name: "p99", points: p99 }] }));
  const cpu = entries.flatMap((e) => (e.results.cpu_busy_percent === undefined ? [] : [{ label: e.id.slice(0, 6), value: e.results.cpu_busy_percent }]));
  if (cpu.length) charts.push(barChart({ title: "CPU busy by run", yLabel: "% of all cores", bars: cpu }));
  for (const s of sweeps(entries)) charts.push(s);
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>anyperf report</title>
<style>body{font-family:sans-serif;margin:16px;color:#222}table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}td:nth-child(-n+5),th{text-align:left}.charts svg{margin:4px;border:1px solid #eee}.failed{color:#b00}.run{margin:12px 0;border-top:1px solid #ccc}.run h3{font-size:14px}</style>
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

/** One chart per sweep (a group whose runs have a point): the ranking figure's median per point, min–max bars. */
function sweeps(entries: readonly HistoryEntry[]): string[] {
  const groups = new Map<string, HistoryEntry[]>();
  for (const e of entries) {
    if (!e.group || Object.keys(e.point).length === 0) continue;
    groups.set(e.group, [...(groups.get(e.group) ?? []), e]);
  }
  const out: string[] = [];
  for (const [group, runs] of groups) {
    const key = primaryKey(runs[0]!.test);
    const points = new Map<string, HistoryEntry[]>();
    for (const r of runs) points.set(pointLabel(r.point), [...(points.get(pointLabel(r.point)) ?? []), r]);
    const bars: Bar[] = [];
    for (const [label, pr] of points) {
      const s = aggregate(pr.map((r) => r.results))[key];
      if (s) bars.push({ label, value: s.median, low: s.min, high: s.max });
    }
    if (bars.length === 0) continue;
    const swept = [...new Set(runs.flatMap((r) => Object.keys(r.point)))].join(" × ");
    out.push(barChart({
      title: `Sweep ${swept} (group ${group.slice(0, 8)}): median ${LABELS[key]}, min–max of repeats`,
      yLabel: key === "throughput_bps" ? "bit/s" : "transactions/s",
      format: key === "throughput_bps" ? (v) => formatBits(v) : undefined,
      width: Math.max(560, 90 * bars.length),
      bars,
    }));
  }
  return out;
}

function runsTable(entries: readonly HistoryEntry[]): string {
  const keys = HEADLINE_KEYS.filter((k) => entries.some((e) => e.results[k] !== undefined));
  const head = ["id", "time", "mode", "peer", "point", ...keys.map((k) => LABELS[k]), "notes"];
  const rows = entries.map((e) => {
    const notes = [...(e.interrupted ? ["interrupted"] : []), ...e.errors].join("; ");
    const cells = [e.id, e.time, e.mode, e.peer ?? "", pointLabel(e.point) + (e.repeat ? ` #${e.repeat}` : ""),
      ...keys.map((k) => (e.results[k] === undefined ? "n/a" : formatFigure(k, e.results[k]!))), notes];
    return `<tr${notes ? ' class="failed"' : ""}>${cells.map((c) => `<td>${escapeXml(c)}</td>`).join("")}</tr>`;
  });
  return `<table><tr>${head.map((h) => `<th>${escapeXml(h)}</th>`).join("")}</tr>\n${rows.join("\n")}</table>`;
}

/** Cores drawn per end: the busiest, so a 64-core host's report stays small and shows the core that limits. */
const CORES_SHOWN = 8;
const MODES = ["user", "nice", "system", "irq", "softirq", "steal", "iowait"] as const;

function coresChart(end: string, cores: NonNullable<RunDetail["cpu_per_core"]>): string {
  const shown = [...cores].sort((a, b) => (b.busy ?? 0) - (a.busy ?? 0)).slice(0, CORES_SHOWN).sort((a, b) => a.cpu - b.cpu);
  return stackedBarChart({
    title: `CPU per core by mode, ${end}${cores.length > shown.length ? ` (the ${shown.length} busiest of ${cores.length} cores)` : ""}`,
    yLabel: "% of the core",
    yMax: 100,
    bars: shown.map((c) => ({ label: `cpu${c.cpu}`, parts: MODES.map((m) => ({ series: m, value: c[m] ?? 0 })) })),
  });
}

/** One run: its diagnosis, its streams over time, its cores; a line from before schema 2 says it has none. */
function runSection(e: HistoryEntry): string {
  const d = e.detail;
  const head = `<h3>${escapeXml(`${e.id} · ${e.mode}${e.peer ? ` · ${e.peer}` : ""}${Object.keys(e.point).length ? ` · ${pointLabel(e.point)}` : ""} · ${e.time}`)}</h3>`;
  if (!d) return `<section class="run">${head}<p>recorded before per-run detail was kept (history schema ${e.v})</p></section>`;
  const parts = [d.diagnosis ? `<p class="diagnosis"><b>${escapeXml(d.diagnosis.verdict)}</b>: ${d.diagnosis.evidence.map(escapeXml).join("<br>")}</p>` : "<p>no diagnosis (only two-host runs, anyperf client, are diagnosed)</p>"];
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
