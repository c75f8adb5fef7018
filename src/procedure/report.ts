import { formatBits } from "../units.ts";
import { changePercent } from "../formulas.ts";
import type { Results } from "../report/result.ts";
import { HEADLINE_KEYS, type Aggregate, type HeadlineKey, type Spread } from "./headline.ts";
import { pointLabel, type Point } from "./options.ts";

export const LABELS: Record<HeadlineKey, string> = {
  throughput_bps: "throughput",
  packets_per_second: "packets/s",
  loss_percent: "loss %",
  transactions_per_second: "transactions/s",
  latency_p50_us: "latency p50 µs",
  latency_p99_us: "latency p99 µs",
  cpu_busy_percent: "CPU busy %",
};

export function formatFigure(k: HeadlineKey, v: number): string {
  if (k === "throughput_bps") return formatBits(v);
  if (k.endsWith("percent")) return v.toFixed(k === "loss_percent" ? 3 : 1);
  return v >= 100 ? Math.round(v).toLocaleString("en-US") : v.toFixed(1);
}

/** The change from A to B in % ("+12.5 %"), blank unless both runs have the figure. */
export function changeText(x: number | undefined, y: number | undefined): string {
  if (x === undefined || y === undefined) return "";
  const c = changePercent(x, y);
  return `${c >= 0 ? "+" : ""}${c.toFixed(1)} %`;
}

/** The range as a range: "±" would read as half of it. */
const rangeText = (s: Spread) => `range ${s.spread_percent.toFixed(1)} % of the median`;
const spreadText = (k: HeadlineKey, s: Spread) => `${formatFigure(k, s.min)} – ${formatFigure(k, s.max)} (${rangeText(s)})`;

/** --repeat: one line per figure, its median and spread over the runs. */
export function repeatText(runs: readonly Results[], agg: Aggregate): string {
  const counted = Math.max(0, ...Object.values(agg).map((s) => s.n));
  const left = runs.length - counted;
  const out = [`${counted} runs${left > 0 ? ` (${left} failed or interrupted, not counted)` : ""}: median and range (min – max; the range, max − min, as % of the median)`];
  for (const k of HEADLINE_KEYS) {
    const s = agg[k];
    if (s) out.push(`  ${LABELS[k].padEnd(16)} ${formatFigure(k, s.median).padStart(16)}   ${spreadText(k, s)}`);
  }
  return out.join("\n");
}

export interface PointOutcome {
  point: Point;
  runs: Results[];
  aggregate: Aggregate;
}

/** --sweep: one row per point, the median and spread of the primary figure, and the best point marked. */
export function sweepTable(points: readonly PointOutcome[], primary: HeadlineKey, best: number): string {
  const keys = HEADLINE_KEYS.filter((k) => points.some((p) => p.aggregate[k]));
  const rows = points.map((p, i) => [
    i === best ? "*" : " ",
    pointLabel(p.point),
    String(p.runs.length),
    ...keys.map((k) => (p.aggregate[k] ? formatFigure(k, p.aggregate[k]!.median) : "n/a")),
    p.aggregate[primary] ? `${p.aggregate[primary]!.spread_percent.toFixed(1)} %` : "n/a",
  ]);
  const head = [" ", "point", "runs", ...keys.map((k) => LABELS[k]), `${LABELS[primary]} range (% of median)`];
  const widths = head.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c]!.length)));
  const fmt = (r: string[]) => r.map((v, c) => (c < 2 ? v.padEnd(widths[c]!) : v.padStart(widths[c]!))).join("  ").trimEnd();
  return [`sweep: medians per point; * best ${LABELS[primary]}`, fmt(head), ...rows.map(fmt)].join("\n");
}

/** The point with the highest median primary figure; -1 when none has it. */
export function bestPoint(points: readonly PointOutcome[], primary: HeadlineKey): number {
  let best = -1;
  points.forEach((p, i) => {
    const v = p.aggregate[primary]?.median;
    if (v !== undefined && (best < 0 || v > points[best]!.aggregate[primary]!.median)) best = i;
  });
  return best;
}
