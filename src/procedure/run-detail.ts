import { z } from "zod";
import { throughputBps } from "../formulas.ts";
import { CpuPercent } from "../host/window.ts";
import { Diagnosis } from "../diagnosis/schema.ts";
import type { Results } from "../report/result.ts";
import { MAX_CHART_STREAMS } from "../report/svg-charts.ts";

/**
 * What the report draws of one run beyond its headline figures (history schema 2): throughput over time per
 * stream, CPU per core per mode at both ends, the diagnosis, the latency percentiles and the retransmits. Bounded so a history line stays a few tens of KB
 * whatever the run: at most MAX_POINTS points (neighbouring intervals merged), MAX_CHART_STREAMS streams, MAX_CORES cores,
 * each figure to 3 significant digits (a chart cannot show more).
 */
export const MAX_POINTS = 60;
export const MAX_CORES = 256;

const CoreModes = CpuPercent.extend({ cpu: z.number().int().nonnegative() });
export const RunDetail = z.object({
  over_time: z
    .object({
      /** End of each point, seconds since the test started. */
      t: z.array(z.number()).max(MAX_POINTS),
      streams: z.array(z.object({ id: z.number().int(), side: z.string().max(8), bps: z.array(z.number()).max(MAX_POINTS) })).max(MAX_CHART_STREAMS),
      /** The run's stream count (more than `streams` holds when it had more than MAX_CHART_STREAMS). */
      streams_total: z.number().int().nonnegative(),
    })
    .optional(),
  cpu_per_core: z.array(CoreModes).max(MAX_CORES).optional(),
  remote_cpu_per_core: z.array(CoreModes).max(MAX_CORES).optional(),
  diagnosis: Diagnosis.pick({ verdict: true, evidence: true }).optional(),
  /** Request/response: the run's latency at the percentiles it measured, µs (the report's CDF and p99.9). */
  latency_us: z.object({ min: z.number(), p50: z.number(), p90: z.number(), p99: z.number(), p999: z.number(), max: z.number() }).optional(),
  /** TCP segments the run's sockets retransmitted over the measured window (the results' `retransmits`). */
  retransmits: z.number().nonnegative().optional(),
});
export type RunDetail = z.infer<typeof RunDetail>;

const sig3 = (v: number) => Number(v.toPrecision(3));

/**
 * Which of a run's streams measure it (drawn per stream here and on the live chart): its receivers or RR clients
 * where it has any; else every stream (a client that only sends).
 */
export function measuringSides(sides: Iterable<string>): (side: string) => boolean {
  const all = new Set(sides);
  return all.has("recv") || all.has("client") ? (side) => side === "recv" || side === "client" : () => true;
}

/**
 * Bits/s per stream per point. Only the streams that measure the run are drawn: its receivers (or RR clients); a
 * client that only sends has only its senders. One pass over the intervals, however many streams a run has.
 */
function overTime(r: Results): RunDetail["over_time"] {
  if (r.intervals.length === 0) return undefined;
  const measures = measuringSides(r.intervals.flatMap((i) => i.streams.map((s) => s.side)));
  const all = new Map<string, { id: number; side: string }>();
  for (const i of r.intervals) for (const s of i.streams) if (measures(s.side)) all.set(`${s.side} ${s.id}`, s);
  const shown = [...all.entries()].slice(0, MAX_CHART_STREAMS);
  const slot = new Map(shown.map(([k], n) => [k, n]));
  // Neighbouring intervals merged into one point: bits/s over the merged time, from their bytes.
  const per = Math.ceil(r.intervals.length / MAX_POINTS);
  const points = Math.ceil(r.intervals.length / per);
  const bytes = shown.map(() => new Array<number>(points).fill(0)), seconds = shown.map(() => new Array<number>(points).fill(0));
  const t = new Array<number>(points).fill(0);
  r.intervals.forEach((i, n) => {
    const p = Math.floor(n / per);
    t[p] = sig3(i.end);
    for (const s of i.streams) {
      const k = slot.get(`${s.side} ${s.id}`);
      if (k === undefined) continue;
      bytes[k]![p]! += s.bytes;
      seconds[k]![p]! += s.seconds;
    }
  });
  return {
    t,
    streams: shown.map(([, { id, side }], k) => ({ id, side, bps: t.map((_, p) => sig3(throughputBps(bytes[k]![p]!, seconds[k]![p]!))) })),
    streams_total: all.size,
  };
}

function cores(perCpu: z.infer<typeof CoreModes>[] | undefined): RunDetail["cpu_per_core"] {
  if (!perCpu || perCpu.length === 0) return undefined;
  return perCpu.slice(0, MAX_CORES).map((c) => Object.fromEntries(Object.entries(c).map(([k, v]) => [k, k === "cpu" ? v : Math.round(v * 10) / 10])) as z.infer<typeof CoreModes>);
}

function latency(r: Results): RunDetail["latency_us"] {
  const l = r.summary.latency_us;
  return l && { min: sig3(l.min), p50: sig3(l.p50), p90: sig3(l.p90), p99: sig3(l.p99), p999: sig3(l.p999), max: sig3(l.max) };
}

export function runDetail(r: Results): RunDetail {
  const d: RunDetail = {
    over_time: overTime(r),
    cpu_per_core: cores(r.cpu.host?.perCpu),
    remote_cpu_per_core: cores(r.remote?.cpu.host?.perCpu),
    diagnosis: r.diagnosis && { verdict: r.diagnosis.verdict, evidence: r.diagnosis.evidence },
    latency_us: latency(r),
    retransmits: r.retransmits,
  };
  return Object.fromEntries(Object.entries(d).filter(([, v]) => v !== undefined)) as RunDetail;
}
