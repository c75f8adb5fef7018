import type { TestRun } from "../engine/test-run.ts";
import { throughputBps } from "../formulas.ts";
import type { Interval } from "../report/result.ts";
import { MAX_CORES, type BytesByDirection, type CpuView, type IntervalEvent, type IntervalSample, type MeasurementView, type Role, type StreamView, type TestView } from "./schema.ts";
import { partOf } from "../engine/run-parts.ts";
import { directionOf, noBytes } from "./direction.ts";
import { cumulativeBuckets } from "./latency-buckets.ts";
import { count } from "../histogram.ts";
import { resultsPending } from "../engine/registry.ts";
import type { StatusSource, StreamSeries } from "./source.ts";
import { MAX_CHART_STREAMS } from "../report/svg-charts.ts";

/**
 * The status source over the engine's TestRuns: a front end adds each run it starts, and this keeps what the
 * status app needs from the run's interval samples (cumulative totals, the recent intervals for the chart). Every
 * figure is the run's own: live CPU from its interval host samples, retransmits from its sockets' TCP_INFO over the
 * measured window, so /status says what the results say.
 * Time on the chart is seconds since the test started, so warm-up, measuring and cool-down share one axis.
 */

const KEEP_INTERVALS = 900;

/** What this source reads of a TestRun; the engine's class has it, and tests can stand in for it. */
export type RunLike = Pick<
  TestRun,
  "info" | "timing" | "phase" | "startedAt" | "phaseStartedMs" | "onInterval" | "onPhase" | "current" | "results" | "liveCpu" | "reportingSide"
>;

interface StreamTotals {
  side: StreamView["side"];
  bytes: number;
  packets: number;
  transactions: number;
  lost?: number;
  jitterMs?: number;
  bitsPerSecond: number;
  measuredBytes: number;
  measuredSeconds: number;
}

interface Tracked {
  id: string;
  run: RunLike;
  seq: number;
  recent: IntervalSample[];
  /** Per measuring stream (the first MAX_CHART_STREAMS), the same recent intervals as `recent`; kept out of /status. */
  perStream: Map<string, StreamSeries>;
  /** The most measuring streams an interval had, so the chart can say "16 of N". */
  measuringStreams: number;
  last?: Interval;
  streams: Map<number, StreamTotals>;
  bytes: number;
  packets: number;
  transactions: number;
  cpu?: CpuView;
  doneAtMs?: number;
  results?: unknown;
  detach: () => void;
}

export interface TestRunSourceOptions {
  mode: string;
  role: Role;
  persistent?: boolean;
  labels?: Readonly<Record<string, string>>;
  /** Tests kept for /status and /results (a long-lived server's memory stays bounded). */
  keep?: number;
}

export class TestRunSource implements StatusSource {
  readonly mode: string;
  readonly role: Role;
  readonly persistent: boolean;
  readonly labels: Readonly<Record<string, string>>;
  private readonly keep: number;
  private tracked: Tracked[] = [];
  private nextId = 1;
  private readonly listeners = new Set<(e: IntervalEvent) => void>();
  /** Bytes of every interval of every test seen, those no longer kept included. */
  private bytes = 0;
  private readonly byDirection = noBytes();

  constructor(opts: TestRunSourceOptions) {
    this.mode = opts.mode;
    this.role = opts.role;
    this.persistent = opts.persistent ?? false;
    this.labels = opts.labels ?? {};
    this.keep = Math.max(1, opts.keep ?? 20);
  }

  /** Starts following a run; returns its id (its /results/<id>). */
  add(run: RunLike): string {
    const t: Tracked = {
      id: String(this.nextId++),
      run,
      seq: 0,
      recent: [],
      perStream: new Map(),
      measuringStreams: 0,
      streams: new Map(),
      bytes: 0,
      packets: 0,
      transactions: 0,
      detach: () => {},
    };
    const offInterval = run.onInterval((i) => this.onInterval(t, i));
    const offPhase = run.onPhase((p) => {
      if (p === "done") t.doneAtMs = Date.now();
    });
    t.detach = () => {
      offInterval();
      offPhase();
    };
    this.tracked.unshift(t);
    for (const old of this.tracked.splice(this.keep)) old.detach();
    return t.id;
  }

  /** The results document as the front end finished it (it may amend TestRun.results()); else that is used. */
  setResults(run: RunLike, results: unknown): void {
    const t = this.tracked.find((x) => x.run === run);
    if (t) t.results = results;
  }

  /** Stops following every run. */
  close(): void {
    for (const t of this.tracked) t.detach();
  }

  private onInterval(t: Tracked, i: Interval): void {
    t.last = i;
    const seconds = Math.max(0, i.end - i.start);
    const end = Math.max(seconds, (Date.now() - t.run.startedAt.getTime()) / 1000);
    for (const s of i.streams) {
      const d = directionOf(s.side);
      if (d) this.byDirection[d] += s.bytes;
      const prev = t.streams.get(s.id);
      const measured = i.phase === "measuring";
      t.streams.set(s.id, {
        side: s.side,
        bytes: (prev?.bytes ?? 0) + s.bytes,
        packets: (prev?.packets ?? 0) + (s.packets ?? 0),
        transactions: (prev?.transactions ?? 0) + (s.transactions ?? 0),
        lost: s.lost === undefined ? prev?.lost : (prev?.lost ?? 0) + Math.max(0, s.lost),
        jitterMs: s.jitter_ms ?? prev?.jitterMs,
        bitsPerSecond: s.throughput_bps,
        measuredBytes: (prev?.measuredBytes ?? 0) + (measured ? s.bytes : 0),
        measuredSeconds: (prev?.measuredSeconds ?? 0) + (measured ? s.seconds : 0),
      });
    }
    t.bytes += i.sum.bytes;
    this.bytes += i.sum.bytes;
    t.packets += i.sum.packets ?? 0;
    t.transactions += i.sum.transactions ?? 0;
    const sample: IntervalSample = {
      start: end - seconds,
      end,
      bitsPerSecond: i.sum.throughput_bps,
      ...(i.sum.packets_per_second === undefined ? {} : { packetsPerSecond: i.sum.packets_per_second }),
      ...(i.sum.transactions_per_second === undefined ? {} : { transactionsPerSecond: i.sum.transactions_per_second }),
      ...(i.sum.latency_us === undefined ? {} : { latencyMicroseconds: { p50: i.sum.latency_us.p50, p90: i.sum.latency_us.p90, p99: i.sum.latency_us.p99 } }),
    };
    t.recent.push(sample);
    if (t.recent.length > KEEP_INTERVALS) t.recent.shift();
    this.keepPerStream(t, i, end);
    const live = t.run.liveCpu;
    if (live) t.cpu = { busyPercent: live.busyPercent, processPercent: live.processPercent, ...(live.perCpu ? { perCore: live.perCpu.slice(0, MAX_CORES) } : {}) };
    const event: IntervalEvent = {
      ...sample,
      testId: t.id,
      seq: t.seq++,
      phase: i.phase,
      streams: i.streams.map((s) => ({ id: s.id, bitsPerSecond: s.throughput_bps })),
    };
    for (const l of [...this.listeners]) {
      try {
        l(event);
      } catch {
        this.listeners.delete(l);
      }
    }
  }

  /** The streams that measure the test: the side its results report (TestRun.reportingSide). */
  private keepPerStream(t: Tracked, i: Interval, end: number): void {
    const reporting = t.run.reportingSide();
    let measuring = 0;
    for (const s of i.streams) {
      if (!reporting.includes(s.side)) continue;
      measuring++;
      const key = `${s.side} ${s.id}`;
      let series = t.perStream.get(key);
      if (!series) {
        if (t.perStream.size >= MAX_CHART_STREAMS) continue;
        series = { id: s.id, side: s.side, points: [] };
        t.perStream.set(key, series);
      }
      series.points.push({ x: end, y: s.throughput_bps });
      if (series.points.length > KEEP_INTERVALS) series.points.shift();
    }
    t.measuringStreams = Math.max(t.measuringStreams, measuring);
  }

  streamSeries(id: string): { shown: readonly StreamSeries[]; total: number } {
    const t = this.tracked.find((x) => x.id === id);
    return { shown: t ? [...t.perStream.values()] : [], total: t?.measuringStreams ?? 0 };
  }

  /** Seconds of the plan left, from the phase the run is in and how long it has been in it. */
  private remaining(t: Tracked): number | null {
    const { warmupS, durationS, cooldownS } = t.run.timing;
    if (durationS <= 0) return null;
    const inPhase = (performance.now() - t.run.phaseStartedMs) / 1000;
    switch (t.run.phase) {
      case "waiting":
        return warmupS + durationS + cooldownS;
      case "warm-up":
        return Math.max(0, warmupS - inPhase) + durationS + cooldownS;
      case "measuring":
        return Math.max(0, durationS - inPhase) + cooldownS;
      case "cool-down":
        return Math.max(0, cooldownS - inPhase);
      case "done":
        return 0;
    }
  }

  private view(t: Tracked): TestView {
    const run = t.run;
    const live = run.current();
    const sum = live?.sum;
    const last = t.last?.sum;
    const endMs = t.doneAtMs ?? Date.now();
    const streams: StreamView[] = [...t.streams.entries()].map(([id, s]) => ({
      id,
      ...(s.side === undefined ? {} : { side: s.side }),
      bytes: s.bytes,
      packets: s.packets,
      transactions: s.transactions,
      bitsPerSecond: s.bitsPerSecond,
      averageBitsPerSecond: throughputBps(s.measuredBytes, s.measuredSeconds),
      ...(s.lost === undefined ? {} : { lost: s.lost }),
      ...(s.jitterMs === undefined ? {} : { jitterMilliseconds: s.jitterMs }),
    }));
    const lost = streams.some((s) => s.lost !== undefined) ? streams.reduce((a, s) => a + (s.lost ?? 0), 0) : undefined;
    const lat = sum?.latency_us;
    const hist = live?.latency?.histogram;
    // The histogram's buckets and sum are of its own count, which the percentiles are taken over too.
    const histogram = hist ? { count: count(hist), buckets: cumulativeBuckets(hist), sumMicroseconds: live!.latency!.sumUs } : undefined;
    return {
      id: t.id,
      mode: run.info.mode,
      role: run.info.role,
      peer: run.info.peer ?? null,
      phase: run.phase,
      startedAt: run.startedAt.toISOString(),
      elapsedSeconds: Math.max(0, (endMs - run.startedAt.getTime()) / 1000),
      durationSeconds: run.timing.durationS > 0 ? run.timing.durationS : null,
      remainingSeconds: this.remaining(t),
      bytes: t.bytes,
      packets: t.packets,
      transactions: t.transactions,
      throughput: { current: last?.throughput_bps ?? 0, average: sum?.throughput_bps ?? 0 },
      ...(last?.packets_per_second === undefined && sum?.packets_per_second === undefined
        ? {}
        : { packetsPerSecond: { current: last?.packets_per_second ?? 0, average: sum?.packets_per_second ?? 0 } }),
      ...(last?.transactions_per_second === undefined && sum?.transactions_per_second === undefined
        ? {}
        : { transactionsPerSecond: { current: last?.transactions_per_second ?? 0, average: sum?.transactions_per_second ?? 0 } }),
      ...(lat
        ? {
            latencyMicroseconds: {
              p50: lat.p50,
              p90: lat.p90,
              p99: lat.p99,
              p999: lat.p999,
              mean: lat.mean,
              count: histogram?.count ?? sum?.transactions ?? 0,
            },
          }
        : {}),
      ...(histogram ? { latencyHistogram: histogram } : {}),
      ...(sum?.transactions === undefined ? {} : { measuredTransactions: sum.transactions }),
      streams,
      ...(t.cpu ? { cpu: t.cpu } : {}),
      ...(sum?.retransmits === undefined ? {} : { retransmits: sum.retransmits }),
      ...(lost === undefined ? {} : { lost }),
      intervals: [...t.recent],
    };
  }

  /**
   * The newest measurement made of several runs (their front end marked them, run-parts.ts), from the kept runs that
   * belong to it: its probe's latency and its load's throughput per interval, on one time axis from its first run.
   */
  measurement(): MeasurementView | undefined {
    const newest = this.tracked.map((t) => partOf(t.run)).find((p) => p !== undefined);
    if (!newest) return undefined;
    const runs = this.tracked.filter((t) => {
      const p = partOf(t.run);
      return p?.kind === newest.kind && p.measurement === newest.measurement;
    }).reverse();
    const t0 = Math.min(...runs.map((t) => t.run.startedAt.getTime()));
    const out: MeasurementView = { kind: newest.kind, phase: newest.phase, startedAt: new Date(t0).toISOString(), probe: [], load: [] };
    for (const t of runs) {
      const { phase, role } = partOf(t.run)!;
      const offset = (t.run.startedAt.getTime() - t0) / 1000;
      for (const i of t.recent) {
        const at = { t: offset + i.end, phase };
        if (role === "load") out.load.push({ ...at, bitsPerSecond: i.bitsPerSecond });
        else if (i.latencyMicroseconds) out.probe.push({ ...at, transport: t.run.info.transport, ...i.latencyMicroseconds });
      }
    }
    // Runs of a phase overlap (the probe runs inside its load): each list in time order.
    out.probe.sort((a, b) => a.t - b.t);
    out.load.sort((a, b) => a.t - b.t);
    return out;
  }

  tests(): TestView[] {
    return this.tracked.map((t) => this.view(t));
  }

  bytesTotal(): number {
    return this.bytes;
  }

  bytesByDirection(): BytesByDirection {
    return { ...this.byDirection };
  }

  current(): TestView | undefined {
    const t = this.tracked.find((x) => x.run.phase !== "done");
    return t && this.view(t);
  }

  results(id?: string): unknown | undefined {
    const t = id === undefined ? this.tracked.find((x) => x.run.phase === "done") : this.tracked.find((x) => x.id === id);
    if (!t || t.run.phase !== "done") return undefined;
    // A front end still completing them (the native client's remote half and diagnosis): not yet.
    if (t.results === undefined && resultsPending(t.run)) return undefined;
    t.results ??= t.run.results();
    return t.results;
  }

  subscribe(listener: (e: IntervalEvent) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }
}
