import { type Row, type Side, type Target, type Unit, targetMet } from "./report.ts";
import { max, median, pairedRatios } from "./stats.ts";

/**
 * What one run of one side gave: a figure, its processes' CPU seconds (over `runSeconds` of run where that is not
 * the bench's T), secondary figures; or why it failed.
 */
export type Outcome = { value: number; cpuSeconds: number; runSeconds?: number; extra?: Record<string, number> } | { error: string } | undefined;
type Measured = Extract<Outcome, { value: number }>;

/** A run's CPU in % of one core: its processes' CPU seconds over the seconds it ran. */
export const cpuPercent = (o: Measured, seconds: number): number => (100 * o.cpuSeconds) / (o.runSeconds ?? seconds);

export interface SideInput {
  label: string;
  how: string;
  /** Index = repeat. */
  outcomes: Outcome[];
}

const ok = (o: Outcome): o is Measured => o !== undefined && "value" in o;

export function summarizeSide(s: SideInput, statistic: "median" | "max", seconds: number): Side {
  const values = s.outcomes.filter(ok).map((o) => o.value);
  const cpu = s.outcomes.filter(ok).map((o) => cpuPercent(o, seconds));
  const keys = new Set(s.outcomes.filter(ok).flatMap((o) => Object.keys(o.extra ?? {})));
  const extra: Record<string, number> = {};
  for (const k of keys) {
    const m = median(s.outcomes.filter(ok).flatMap((o) => (o.extra?.[k] === undefined ? [] : [o.extra[k]!])));
    if (m !== undefined) extra[k] = m;
  }
  return {
    label: s.label,
    how: s.how,
    samples: s.outcomes.map((o) => (ok(o) ? o.value : null)),
    statistic,
    figure: (statistic === "max" ? max(values) : median(values)) ?? null,
    cpu_percent: median(cpu) ?? null,
    extra,
    errors: [...new Set(s.outcomes.flatMap((o) => (o !== undefined && "error" in o ? [o.error] : [])))],
  };
}

export interface RowInput {
  id: string;
  workload: string;
  unit: Unit;
  target: Target;
  cpuScope: string;
  statistic: "median" | "max";
  reference?: SideInput;
  anyperf: SideInput;
  skipped?: string;
}

/** A table row: each side's figure, the median of the repeats' paired ratios (anyperf ÷ reference), the verdict. */
export function summarizeRow(r: RowInput, seconds: number): Row {
  const ref = r.reference && summarizeSide(r.reference, r.statistic, seconds);
  const any = summarizeSide(r.anyperf, r.statistic, seconds);
  const ratios = ref ? pairedRatios(any.samples.map((v) => v ?? undefined), ref.samples.map((v) => v ?? undefined)) : [];
  const ratio = median(ratios) ?? null;
  const skipped = r.skipped ?? null;
  return {
    id: r.id,
    workload: r.workload,
    unit: r.unit,
    target: r.target,
    cpu_scope: r.cpuScope,
    reference: ref ?? null,
    anyperf: any,
    ratios,
    ratio,
    met: skipped ? null : targetMet(r.target, ratio, any.figure),
    skipped,
  };
}
