import { z } from "zod";
import { HostWindow } from "../host/window.ts";
import { TcpBufferCeilings } from "../host/link-facts.ts";
import { BacklogSeen } from "../host/backlog-seen.ts";
import { Diagnosis, TcpPath } from "../diagnosis/schema.ts";

/** The one results document every mode produces; `--json` prints it, dialects reformat it, /results serves it. */

export const Latency = z.object({
  mean: z.number(),
  min: z.number(),
  max: z.number(),
  p50: z.number(),
  p90: z.number(),
  p99: z.number(),
  p999: z.number(),
});
export type Latency = z.infer<typeof Latency>;

/** Figures of one stream, one side, or the whole test over one window. */
export const Figures = z.object({
  bytes: z.number().nonnegative(),
  seconds: z.number().nonnegative(),
  throughput_bps: z.number().nonnegative(),
  packets: z.number().nonnegative().optional(),
  packets_per_second: z.number().nonnegative().optional(),
  lost: z.number().optional(),
  loss_percent: z.number().optional(),
  out_of_order: z.number().optional(),
  jitter_ms: z.number().optional(),
  send_errors: z.number().optional(),
  transactions: z.number().nonnegative().optional(),
  transactions_per_second: z.number().nonnegative().optional(),
  latency_us: Latency.optional(),
  /** TCP_INFO of the sockets (Linux): segments retransmitted, mean smoothed RTT, summed congestion window. */
  retransmits: z.number().nonnegative().optional(),
  rtt_us: z.number().nonnegative().optional(),
  cwnd: z.number().nonnegative().optional(),
});
export type Figures = z.infer<typeof Figures>;

export const StreamFigures = Figures.extend({
  id: z.number().int(),
  side: z.enum(["send", "recv", "client", "server"]),
  connections: z.number().int().nonnegative(),
});
export type StreamFigures = z.infer<typeof StreamFigures>;

export const Interval = z.object({
  start: z.number(),
  end: z.number(),
  phase: z.enum(["warm-up", "measuring", "cool-down"]),
  sum: Figures,
  streams: z.array(Figures.extend({ id: z.number().int(), side: StreamFigures.shape.side })),
});
export type Interval = z.infer<typeof Interval>;

/** -w as asked and as the kernel gave it on this end's data sockets (getsockopt, once set and at each TCP_INFO sample). */
export const SocketBuffers = z.object({
  /** What -w asked of SO_SNDBUF and SO_RCVBUF on every data socket. */
  requested_bytes: z.number().int().positive(),
  /** getsockopt(SO_SNDBUF) of the sending streams' sockets, the smallest; Linux reports twice what was set. */
  send_bytes: z.number().int().nonnegative().optional(),
  /** getsockopt(SO_RCVBUF) of the receiving streams' sockets, the smallest. */
  receive_bytes: z.number().int().nonnegative().optional(),
});
export type SocketBuffers = z.infer<typeof SocketBuffers>;

export const Phase = z.enum(["waiting", "warm-up", "measuring", "cool-down", "done"]);
export type Phase = z.infer<typeof Phase>;

const Core = z.object({
  tool: z.literal("anyperf"),
  version: z.string(),
  mode: z.string(),
  role: z.string(),
  peer: z.string().optional(),
  transport: z.enum(["tcp", "udp"]),
  test: z.enum(["stream", "rr", "crr"]),
  started_at: z.string(),
  /** --label KEY=VALUE (or POD_NAME/NODE_NAME in a pod): who ran this test, as on its /metrics series. */
  labels: z.record(z.string(), z.string()).optional(),
  interrupted: z.boolean(),
  phases: z.object({ warmup_s: z.number(), measured_s: z.number(), cooldown_s: z.number() }),
  /** The measured window, from the side that reports (the receiver when we have it, as iperf3 does). */
  summary: Figures,
  sender: Figures.optional(),
  receiver: Figures.optional(),
  /** Whole-run totals of each side (warm-up and cool-down included): what reconciles exactly on loopback. */
  totals: z.object({
    sent_bytes: z.number().optional(),
    received_bytes: z.number().optional(),
    sent_packets: z.number().optional(),
    received_packets: z.number().optional(),
    transactions: z.number().optional(),
  }),
  streams: z.array(StreamFigures),
  intervals: z.array(Interval),
  cpu: z.object({
    busy_percent: z.number().optional(),
    process_percent: z.number().optional(),
    cycles_per_byte: z.number().optional(),
    host: HostWindow.optional(),
  }),
  /**
   * TCP segments this test's own sockets retransmitted over the measured window (TCP_INFO), the figure summary,
   * sender, receiver and /status show too; absent for UDP and where TCP_INFO cannot be read. The host's count of
   * every connection is cpu.host.tcp.retransSegs.
   */
  retransmits: z.number().optional(),
  /** The sending streams' TCP_INFO over the measured window: where the senders' time went, delivery rate, RTTs. */
  tcp_path: TcpPath.optional(),
  socket_buffers: SocketBuffers.optional(),
  /** Many-flows figures of one process (loopback, each end of a native test): what a flow costs in memory, whether any starved. */
  flows: z
    .object({
      count: z.number().int(),
      /** Process RSS before the streams were opened and at the end of the measured window. */
      rss_before_bytes: z.number(),
      rss_with_flows_bytes: z.number(),
      memory_per_flow_bytes: z.number(),
      /** Slowest flow's rate ÷ fastest flow's (transactions/s, or bits/s received), 0..1. */
      slowest_to_fastest: z.number(),
    })
    .optional(),
  errors: z.array(z.string()),
});

/**
 * The far end of a two-host run (`anyperf client`), cut over the same measured window as this end: what it moved per
 * stream, its CPU (same shape as `cpu`), its TCP counters. Intervals stay with the end that reports them.
 */
export const RemoteEnd = Core.pick({ role: true, phases: true, sender: true, receiver: true, totals: true, streams: true, cpu: true, retransmits: true, tcp_path: true, socket_buffers: true, flows: true, errors: true }).extend({
  /** Its measured window; absent when the peer reports nothing of its end (an iperf 2 TCP server sends no figures). */
  summary: Figures.optional(),
  /** The far end's anyperf version; absent when a stock tool served the test (see `peer`). */
  version: z.string().optional(),
  /** Its TCP buffer ceilings: with ours, the window one stream can reach (diagnosis). */
  tcp_buffers: TcpBufferCeilings.optional(),
  /**
   * Its shaping qdisc (tbf, htb) on its route to this end, read every 200 ms over the window while it sends: the
   * queue a download built on the server's side. Absent from older serves, unshaped routes and receiving ends.
   */
  qdisc: BacklogSeen.optional(),
  /** What served the test when it was not `anyperf serve`'s native server: the stock tool and, when it said, its version. */
  peer: z.object({ name: z.enum(["iperf3", "netperf", "iperf", "ntttcp"]), version: z.string().optional() }).optional(),
});
export type RemoteEnd = z.infer<typeof RemoteEnd>;

/**
 * One server of a run over many (`anyperf client H1 H2 ...`): its figures over the run's common window (the receiving
 * end's, as `summary` is: the server's when only this host sends, with this host's as `sender`) and its whole remote
 * end; `error` names a server that refused or dropped out (the rest of the run went on without it).
 */
export const HostResult = z.object({
  host: z.string(),
  port: z.number().int().min(1).max(65535),
  /** What served it: anyperf serve's native server, or the stock tool driven over its own protocol. */
  peer: z.enum(["anyperf", "iperf3", "netperf", "iperf", "ntttcp"]),
  summary: Figures.optional(),
  sender: Figures.optional(),
  remote: RemoteEnd.optional(),
  error: z.string().optional(),
});
export type HostResult = z.infer<typeof HostResult>;

/** `diagnosis`: what limited a two-host run (src/diagnosis), judged from both ends over the window. */
export const Results = Core.extend({
  remote: RemoteEnd.optional(),
  diagnosis: Diagnosis.optional(),
  /** The senders' -b pace over all streams, bits/s, when one was asked for (a sender that missed it is said so). */
  target_bps: z.number().positive().optional(),
  /** A run over many servers: one entry per server, in the order given; the top level is the whole run. */
  hosts: z.array(HostResult).optional(),
});
export type Results = z.infer<typeof Results>;
