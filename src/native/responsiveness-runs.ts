/**
 * Several `--responsiveness` runs side by side: `--repeat`'s median and spread per phase, and `compare`'s rows for two
 * recorded runs. Each figure is one the single run prints (the load's throughput, the probe's percentiles, RPM).
 */
import { z } from "zod";
import { Spread, spreadOf, type Headline } from "../procedure/headline.ts";
import { pointLabel, type Point } from "../procedure/options.ts";
import { changeText } from "../procedure/report.ts";
import { formatMicroseconds } from "../report/text.ts";
import { formatBits } from "../units.ts";
import { LOADED_PHASES, type PhaseName, type Responsiveness, type ResponsivenessPhase } from "./responsiveness-report.ts";

export const PHASES = ["idle", ...LOADED_PHASES] as const satisfies readonly PhaseName[];

const FIGURES = {
  throughput_bps: { label: "throughput", of: (p: ResponsivenessPhase) => p.throughput_bps, text: formatBits },
  latency_p50_us: { label: "p50", of: (p: ResponsivenessPhase) => p.latency_us.p50, text: formatMicroseconds },
  latency_p90_us: { label: "p90", of: (p: ResponsivenessPhase) => p.latency_us.p90, text: formatMicroseconds },
  latency_p99_us: { label: "p99", of: (p: ResponsivenessPhase) => p.latency_us.p99, text: formatMicroseconds },
  udp_p50_us: { label: "UDP p50", of: (p: ResponsivenessPhase): number | undefined => p.udp_latency_us?.p50, text: formatMicroseconds },
  rpm: { label: "RPM", of: (p: ResponsivenessPhase) => p.rpm, text: (v: number) => String(Math.round(v)) },
} as const;
type Figure = keyof typeof FIGURES;
const FIGURE_KEYS = Object.keys(FIGURES) as Figure[];

/** Idle has no load: its throughput is no figure. */
const figuresOf = (phase: PhaseName) => FIGURE_KEYS.filter((k) => phase !== "idle" || k !== "throughput_bps");

export const PhaseSpread = z.partialRecord(z.enum(FIGURE_KEYS as [Figure, ...Figure[]]), Spread);
export type PhaseSpread = z.infer<typeof PhaseSpread>;
export const ResponsivenessSpread = z.partialRecord(z.enum(PHASES), PhaseSpread);
export type ResponsivenessSpread = z.infer<typeof ResponsivenessSpread>;

/** Per phase, each figure's median and spread over the runs that measured that phase. */
export function responsivenessSpread(runs: readonly Responsiveness[]): ResponsivenessSpread {
  const out: ResponsivenessSpread = {};
  for (const phase of PHASES) {
    const measured = runs.flatMap((r) => (r[phase] ? [r[phase]!] : []));
    if (measured.length === 0) continue;
    const spreads: PhaseSpread = {};
    for (const k of figuresOf(phase)) {
      // A figure no run has (UDP pings in lines recorded before them) is left out, not an empty spread.
      const spread = spreadOf(measured.map(FIGURES[k].of));
      if (spread) spreads[k] = spread;
    }
    out[phase] = spreads;
  }
  return out;
}

/** --repeat's text: one row per phase and figure, its median, min – max and the range as % of the median. */
export function responsivenessSpreadText(runs: number, counted: number, s: ResponsivenessSpread): string {
  const left = runs - counted;
  const out = [`${counted} runs${left > 0 ? ` (${left} interrupted, not counted)` : ""} of the idle, upload, download and bidir phases: median and range (min – max; the range, max − min, as % of the median)`];
  for (const phase of PHASES) {
    for (const k of figuresOf(phase)) {
      const v = s[phase]?.[k];
      if (!v) continue;
      const f = FIGURES[k];
      out.push(`  ${phase.padEnd(9)} ${f.label.padEnd(10)} ${f.text(v.median).padStart(12)}   ${f.text(v.min)} – ${f.text(v.max)} (range ${v.spread_percent.toFixed(1)} % of the median)`);
    }
  }
  return out.join("\n");
}

/** `compare`'s rows for two responsiveness runs: each phase's figures, A, B and the change in %. */
export function responsivenessCompareRows(a: Responsiveness, b: Responsiveness): string[][] {
  const rows: string[][] = [];
  for (const phase of PHASES) {
    const [pa, pb] = [a[phase], b[phase]];
    if (!pa && !pb) continue;
    for (const k of figuresOf(phase)) {
      const f = FIGURES[k];
      const x = pa && f.of(pa), y = pb && f.of(pb);
      // Neither run has it (both recorded before the UDP pings): no row.
      if (pa && pb && x === undefined && y === undefined) continue;
      rows.push([`${phase} ${f.label}`, x === undefined ? "n/a" : f.text(x), y === undefined ? "n/a" : f.text(y), changeText(x, y)]);
    }
  }
  return rows;
}

/** The history line's headline: the bidir phase's figures (load both ways, as the document's RPM). */
export function responsivenessHeadline(r: Responsiveness): Headline {
  return r.bidir ? { throughput_bps: r.bidir.throughput_bps, latency_p50_us: r.bidir.latency_us.p50, latency_p99_us: r.bidir.latency_us.p99 } : {};
}

/** One --sweep point: its runs (each the whole idle/upload/download/bidir sequence) and their spread per phase. */
export interface ResponsivenessPoint {
  point: Point;
  runs: { started_at: string; interrupted: boolean; responsiveness: Responsiveness }[];
  aggregate: ResponsivenessSpread;
}

/** The point that kept the path most responsive: the highest median RPM (bidir's, the document's); -1 when none has one. */
export function bestResponsivePoint(points: readonly ResponsivenessPoint[]): number {
  let best = -1;
  points.forEach((p, i) => {
    const v = p.aggregate.bidir?.rpm?.median;
    if (v !== undefined && (best < 0 || v > points[best]!.aggregate.bidir!.rpm!.median)) best = i;
  });
  return best;
}

/** --sweep's table: per point the medians of the probe's p50 in each phase, bidir's throughput and RPM, the best marked. */
export function responsivenessSweepTable(points: readonly ResponsivenessPoint[], best: number): string {
  const cols: { head: string; of: (s: ResponsivenessSpread) => Spread | undefined; text: (v: number) => string }[] = [
    ...PHASES.map((phase) => ({ head: `${phase} p50`, of: (s: ResponsivenessSpread) => s[phase]?.latency_p50_us, text: FIGURES.latency_p50_us.text })),
    { head: "bidir throughput", of: (s) => s.bidir?.throughput_bps, text: FIGURES.throughput_bps.text },
    { head: "RPM", of: (s) => s.bidir?.rpm, text: FIGURES.rpm.text },
  ];
  const rows = points.map((p, i) => [
    i === best ? "*" : " ",
    pointLabel(p.point),
    String(p.runs.length),
    ...cols.map((c) => {
      const v = c.of(p.aggregate);
      return v ? c.text(v.median) : "n/a";
    }),
    p.aggregate.bidir?.rpm ? `${p.aggregate.bidir.rpm.spread_percent.toFixed(1)} %` : "n/a",
  ]);
  const head = [" ", "point", "runs", ...cols.map((c) => c.head), "RPM range (% of median)"];
  const widths = head.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c]!.length)));
  const fmt = (r: string[]) => r.map((v, c) => (c < 2 ? v.padEnd(widths[c]!) : v.padStart(widths[c]!))).join("  ").trimEnd();
  return ["sweep: medians per point of the probe's p50 by phase, the bidir load's throughput and RPM; * most responsive (highest RPM)", fmt(head), ...rows.map(fmt)].join("\n");
}
