import { z } from "zod";
import { CpuPercent } from "../host/window.ts";

/** Cores a CPU view lists at most (a history line keeps as many). */
export const MAX_CORES = 256;

/**
 * What the live status endpoint shows. The engine's registry of live tests fills these shapes (see source.ts);
 * the app only serializes them, so every figure here is computed once, by the engine, with src/formulas.ts.
 * Units are in the field names or the descriptions: bits/s for rates, µs for latency, seconds for time.
 */

export const Phase = z.enum(["waiting", "warm-up", "measuring", "cool-down", "done"]);
export type Phase = z.infer<typeof Phase>;

/**
 * client/server for iperf3, iperf 2, netperf/netserver and the native tool, sender/receiver for ntttcp, both for
 * loopback: whatever the front end calls itself, so a new mode needs no change here.
 */
export const Role = z.string().min(1);
export type Role = z.infer<typeof Role>;

/** A rate now (the last interval) and averaged over the measured window so far. */
export const Rate = z.object({
  current: z.number().nonnegative(),
  average: z.number().nonnegative(),
});
export type Rate = z.infer<typeof Rate>;

/** Round-trip latency of request/response transactions, µs, over the measured window so far. */
export const LatencyPercentiles = z.object({
  p50: z.number().nonnegative(),
  p90: z.number().nonnegative(),
  p99: z.number().nonnegative(),
  p999: z.number().nonnegative(),
  mean: z.number().nonnegative(),
  /** Transactions the percentiles are taken over. */
  count: z.number().int().nonnegative(),
});
export type LatencyPercentiles = z.infer<typeof LatencyPercentiles>;

/**
 * /metrics' latency histogram over the measured window so far. Present from the window's first instant, with zero
 * counts before the first transaction: a scrape never finds the family missing while a request/response test measures.
 */
export const LatencyHistogram = z.object({
  count: z.number().int().nonnegative(),
  /** Sum of every transaction's latency, µs (the histogram's _sum). */
  sumMicroseconds: z.number().nonnegative(),
  /** Cumulative counts under each bound of LATENCY_BUCKETS_SECONDS (latency-buckets.ts); the last bound's is <= count. */
  buckets: z.array(z.number().int().nonnegative()),
});
export type LatencyHistogram = z.infer<typeof LatencyHistogram>;

export const CpuView = z.object({
  /** Whole host, all cores: 100 = every core busy. */
  busyPercent: z.number().nonnegative(),
  /** This process: 100 = one core. */
  processPercent: z.number().nonnegative(),
  /** Each core's modes, % of that core (GET /cpu.svg draws the busiest). */
  perCore: z.array(CpuPercent.extend({ cpu: z.number().int().nonnegative() })).max(MAX_CORES).optional(),
});
export type CpuView = z.infer<typeof CpuView>;

/** One data stream (one counter slot); totals are cumulative since the test started. */
export const StreamView = z.object({
  id: z.number().int().nonnegative(),
  /** Which end of the stream this process is, where it runs both (loopback) or several kinds. */
  side: z.enum(["send", "recv", "client", "server"]).optional(),
  bytes: z.number().nonnegative(),
  packets: z.number().nonnegative(),
  transactions: z.number().nonnegative(),
  /** bits/s in the last interval. */
  bitsPerSecond: z.number().nonnegative(),
  /** bits/s over the measured window so far. */
  averageBitsPerSecond: z.number().nonnegative(),
  /** TCP segments retransmitted (TCP_INFO), where the socket can be read. */
  retransmits: z.number().int().nonnegative().optional(),
  /** UDP datagrams missing from the sequence. */
  lost: z.number().int().nonnegative().optional(),
  jitterMilliseconds: z.number().nonnegative().optional(),
  rttMicroseconds: z.number().nonnegative().optional(),
});
export type StreamView = z.infer<typeof StreamView>;

/** Round-trip latency of one interval's transactions, µs. */
export const IntervalLatency = z.object({ p50: z.number().nonnegative(), p90: z.number().nonnegative(), p99: z.number().nonnegative() });
export type IntervalLatency = z.infer<typeof IntervalLatency>;

/** One interval's figures: `start`/`end` are seconds since the test started. */
export const IntervalSample = z.object({
  start: z.number().nonnegative(),
  end: z.number().nonnegative(),
  bitsPerSecond: z.number().nonnegative(),
  packetsPerSecond: z.number().nonnegative().optional(),
  transactionsPerSecond: z.number().nonnegative().optional(),
  /** Request/response: the interval's own transactions (the engine's interval cut), where it timed any. */
  latencyMicroseconds: IntervalLatency.optional(),
});
export type IntervalSample = z.infer<typeof IntervalSample>;

/** What /events sends once per interval. */
export const IntervalEvent = IntervalSample.extend({
  testId: z.string().min(1),
  /** Counts the test's intervals from 0, so a client can tell a gap from a repeat. */
  seq: z.number().int().nonnegative(),
  phase: Phase,
  streams: z.array(z.object({ id: z.number().int().nonnegative(), bitsPerSecond: z.number().nonnegative() })),
});
export type IntervalEvent = z.infer<typeof IntervalEvent>;

export const TestView = z.object({
  /** Unique within the process; /results/<id> serves this test's results once done. */
  id: z.string().min(1).regex(/^[A-Za-z0-9._-]+$/),
  /** The front end that runs the test: loopback, ntttcp, iperf3, iperf, netperf, netserver, ... */
  mode: z.string().min(1),
  role: Role,
  /** host:port of the other end, null where there is none yet (a server waiting) or none at all (loopback). */
  peer: z.string().nullable(),
  phase: Phase,
  startedAt: z.iso.datetime(),
  elapsedSeconds: z.number().nonnegative(),
  /** Planned measuring time; null when the test ends on a byte or packet count, or when the peer decides. */
  durationSeconds: z.number().nonnegative().nullable(),
  remainingSeconds: z.number().nonnegative().nullable(),
  /** Totals of the reporting side since the first interval, warm-up included (the rates are the measured window's). */
  bytes: z.number().nonnegative(),
  packets: z.number().nonnegative(),
  transactions: z.number().nonnegative(),
  /** bits/s. */
  throughput: Rate,
  /** Where packets are the unit that matters (UDP). */
  packetsPerSecond: Rate.optional(),
  /** Where the test is request/response. */
  transactionsPerSecond: Rate.optional(),
  latencyMicroseconds: LatencyPercentiles.optional(),
  latencyHistogram: LatencyHistogram.optional(),
  /**
   * Request/response: transactions of the reporting side over the measured window so far, from the cut the latency
   * histogram is taken in (so they agree with `latencyHistogram.count`).
   */
  measuredTransactions: z.number().nonnegative().optional(),
  streams: z.array(StreamView),
  cpu: CpuView.optional(),
  /**
   * TCP segments this test's own sockets retransmitted over the measured window so far (TCP_INFO), the same figure
   * as the results' `retransmits`; absent where TCP_INFO cannot be read, and for UDP.
   */
  retransmits: z.number().int().nonnegative().optional(),
  /** UDP datagrams lost, summed over the streams. */
  lost: z.number().int().nonnegative().optional(),
  /** The most recent intervals, oldest first, for the chart; the source decides how many it keeps. */
  intervals: z.array(IntervalSample),
});
export type TestView = z.infer<typeof TestView>;

/** A line in the list of recent tests. */
export const TestSummary = TestView.pick({
  id: true,
  mode: true,
  role: true,
  peer: true,
  phase: true,
  startedAt: true,
  elapsedSeconds: true,
}).extend({
  averageBitsPerSecond: z.number().nonnegative(),
  /** Path of this test's results document, null until the test is done. */
  results: z.string().nullable(),
});
export type TestSummary = z.infer<typeof TestSummary>;

/**
 * A measurement made of several tests, shown as one (`anyperf client --responsiveness`: per phase a probe and, but
 * idle, a load). `t` is seconds since the measurement's first test started, each sample at its interval's end.
 */
export const MeasurementView = z.object({
  kind: z.string().min(1),
  /** The phase of the newest test (the running one, else the last). */
  phase: z.string().min(1),
  startedAt: z.iso.datetime(),
  /** The probe's intervals: each one's round-trip percentiles, in every phase; its TCP request/response and UDP pings. */
  probe: z.array(IntervalLatency.extend({ t: z.number().nonnegative(), phase: z.string().min(1), transport: z.enum(["tcp", "udp"]) })),
  /** The load's intervals: its throughput (bits/s), in the loaded phases. */
  load: z.array(z.object({ t: z.number().nonnegative(), phase: z.string().min(1), bitsPerSecond: z.number().nonnegative() })),
});
export type MeasurementView = z.infer<typeof MeasurementView>;

/** GET /status. */
export const StatusDocument = z.object({
  /** What this process was started as. */
  mode: z.string().min(1),
  role: Role,
  /** --label KEY=VALUE (or the pod's POD_NAME/NODE_NAME): on every /metrics series too. */
  labels: z.record(z.string(), z.string()),
  /** The running test's phase; "waiting" while none runs yet (or, for a server, between tests). */
  phase: Phase,
  now: z.iso.datetime(),
  /** The running test (the newest, when several run), else the most recent one, else null. */
  test: TestView.nullable(),
  /** Every test running now, newest first (a server answering several clients at once). */
  running: z.array(TestView),
  /** Payload bytes every test of this process has moved since it started, finished tests included. */
  bytesTotal: z.number().nonnegative(),
  /**
   * The same bytes by direction, as this process's streams saw them: `sent` by senders, `received` by receivers,
   * `both` by request/response streams (requests and responses). Loopback counts each byte as sent and received.
   */
  bytesByDirection: z.object({ sent: z.number().nonnegative(), received: z.number().nonnegative(), both: z.number().nonnegative() }),

  /** Recent tests, newest first. */
  recent: z.array(TestSummary),
  /** The newest measurement made of several tests (--responsiveness), while its tests are kept; absent without one. */
  measurement: MeasurementView.optional(),
});
export type StatusDocument = z.infer<typeof StatusDocument>;
export type BytesByDirection = StatusDocument["bytesByDirection"];
