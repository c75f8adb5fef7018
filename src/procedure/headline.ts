import { z } from "zod";
import type { Results } from "../report/result.ts";
import { median, relativeSpreadPercent } from "../formulas.ts";

/** The figures a procedure compares across runs: each is the run's own printed figure, copied, not recomputed. */
export const Headline = z.object({
  throughput_bps: z.number().optional(),
  packets_per_second: z.number().optional(),
  loss_percent: z.number().optional(),
  transactions_per_second: z.number().optional(),
  latency_p50_us: z.number().optional(),
  latency_p99_us: z.number().optional(),
  cpu_busy_percent: z.number().optional(),
});
export type Headline = z.infer<typeof Headline>;
export type HeadlineKey = keyof Headline;
export const HEADLINE_KEYS = Object.keys(Headline.shape) as HeadlineKey[];

export function headlineOf(r: Results): Headline {
  const s = r.summary;
  const h: Headline = {
    throughput_bps: s.throughput_bps,
    packets_per_second: s.packets_per_second,
    loss_percent: s.loss_percent,
    transactions_per_second: s.transactions_per_second,
    latency_p50_us: s.latency_us?.p50,
    latency_p99_us: s.latency_us?.p99,
    cpu_busy_percent: r.cpu.busy_percent,
  };
  return Object.fromEntries(Object.entries(h).filter(([, v]) => v !== undefined)) as Headline;
}

/**
 * The one figure that ranks runs: transactions/s for request/response, throughput for bulk and for responsiveness
 * (its headline is the bidir phase's: load both ways, the probe beside it).
 */
export function primaryKey(test: Results["test"] | "responsiveness"): "throughput_bps" | "transactions_per_second" {
  return test === "rr" || test === "crr" ? "transactions_per_second" : "throughput_bps";
}

export const Spread = z.object({ n: z.number().int(), median: z.number(), min: z.number(), max: z.number(), spread_percent: z.number() });
export type Spread = z.infer<typeof Spread>;
export const Aggregate = z.partialRecord(z.enum(HEADLINE_KEYS as [HeadlineKey, ...HeadlineKey[]]), Spread);
export type Aggregate = z.infer<typeof Aggregate>;

/** Median and spread of one figure over the runs that have it; none when no run has it. */
export function spreadOf(maybe: readonly (number | undefined)[]): Spread | undefined {
  const values = maybe.filter((v): v is number => v !== undefined);
  if (values.length === 0) return undefined;
  const min = Math.min(...values), max = Math.max(...values), med = median(values);
  return { n: values.length, median: med, min, max, spread_percent: relativeSpreadPercent(min, max, med) };
}

/** Median and spread of every headline figure the runs have (a figure only some runs have counts over those). */
export function aggregate(runs: readonly Headline[]): Aggregate {
  const out: Aggregate = {};
  for (const k of HEADLINE_KEYS) {
    const s = spreadOf(runs.map((h) => h[k]));
    if (s) out[k] = s;
  }
  return out;
}
