import { z } from "zod";

/** bench/results.json: one row per table line, with every repeat's figure so a reader can redo the medians. */

export const Target = z.discriminatedUnion("kind", [
  /** anyperf ÷ reference, median of the repeats' paired ratios, at least `value`. */
  z.object({ kind: z.literal("ratio-at-least"), value: z.number() }),
  /** anyperf's own figure (its statistic), at most `value` in the row's unit. */
  z.object({ kind: z.literal("anyperf-at-most"), value: z.number() }),
  /** 1 − anyperf ÷ reference, as a percentage, at most `value` (the reference is the same run without the load). */
  z.object({ kind: z.literal("cost-at-most-percent"), value: z.number() }),
  /** The same cost, shown but not judged: what the measuring itself costs on this machine, for reading the row above. */
  z.object({ kind: z.literal("cost-shown") }),
  /** anyperf's figures only, shown for the record (scale rows: no stock peer to run 10,000 flows against). */
  z.object({ kind: z.literal("figure-shown") }),
]);
export type Target = z.infer<typeof Target>;

export const Unit = z.enum(["bit/s", "packets/s", "trans/s", "conn/s", "ms", "bytes"]);
export type Unit = z.infer<typeof Unit>;

export const Side = z.object({
  label: z.string(),
  /** The command and which of its figures is taken. */
  how: z.string(),
  /** One figure per repeat (per spawn for start-up); null where that run failed. */
  samples: z.array(z.number().nullable()),
  statistic: z.enum(["median", "max"]),
  figure: z.number().nullable(),
  /** CPU of this side's processes (see the row's cpu_scope) as % of one core over the test seconds, median. */
  cpu_percent: z.number().nullable(),
  /** Medians of secondary figures, e.g. loss_percent. */
  extra: z.record(z.string(), z.number()),
  errors: z.array(z.string()),
});
export type Side = z.infer<typeof Side>;

export const Row = z.object({
  id: z.string(),
  workload: z.string(),
  unit: Unit,
  target: Target,
  cpu_scope: z.string(),
  reference: Side.nullable(),
  anyperf: Side.nullable(),
  ratios: z.array(z.number()),
  ratio: z.number().nullable(),
  met: z.boolean().nullable(),
  skipped: z.string().nullable(),
});
export type Row = z.infer<typeof Row>;

export const BenchReport = z.object({
  started_at: z.string(),
  finished_at: z.string(),
  elapsed_s: z.number(),
  quick: z.boolean(),
  repeats: z.number().int(),
  seconds: z.number(),
  host: z.object({ cores: z.number().int(), kernel: z.string(), loadavg_start: z.string(), loadavg_end: z.string() }),
  anyperf: z.object({ path: z.string(), version: z.string() }),
  peers: z.record(z.string(), z.string()),
  rows: z.array(Row),
});
export type BenchReport = z.infer<typeof BenchReport>;

/** Whether the row meets its target; null when it was skipped or has no figure to judge. */
export function targetMet(target: Target, ratio: number | null, anyperfFigure: number | null): boolean | null {
  switch (target.kind) {
    case "ratio-at-least":
      return ratio === null ? null : ratio >= target.value;
    case "anyperf-at-most":
      return anyperfFigure === null ? null : anyperfFigure <= target.value;
    case "cost-at-most-percent":
      return ratio === null ? null : costPercent(ratio) <= target.value;
    case "cost-shown":
    case "figure-shown":
      return null;
  }
}

export function costPercent(ratio: number): number {
  return (1 - ratio) * 100;
}
