import { z } from "zod";
import { LinkFacts } from "../host/link-facts.ts";
import { HostWindow } from "../host/window.ts";

export const Verdict = z.enum(["link", "sender-cpu", "receiver-cpu", "window", "loss", "unclear"]);
export type Verdict = z.infer<typeof Verdict>;

/** The CPU modes that make a core busy (idle and iowait do not). */
export const BusyMode = z.enum(["user", "nice", "system", "irq", "softirq", "steal"]);
export type BusyMode = z.infer<typeof BusyMode>;

/** The busiest core of one end over the measured window, and the mode that took most of it. */
export const CoreLoad = z.object({
  cpu: z.number().int().nonnegative(),
  busy_percent: z.number(),
  mode: BusyMode,
  mode_percent: z.number(),
});
export type CoreLoad = z.infer<typeof CoreLoad>;

/** What one end's host window tells the diagnosis (process: anyperf's own CPU there, 100 = one core). */
export const EndHost = HostWindow.pick({ cores: true, perCpu: true, tcp: true, process: true, cgroup: true });
export type EndHost = z.infer<typeof EndHost>;

/**
 * The sending sockets' TCP_INFO over the measured window (src/engine/tcp-path.ts), summed over the sending streams:
 * the kernel's chrono stats (busy_time holds rwnd_limited and sndbuf_limited; busy and neither is the network's),
 * the delivery rate, the RTTs.
 */
export const TcpPath = z.object({
  streams: z.number().int().positive(),
  /** Time the reads span, µs, summed over the streams: what busy_time is a share of. */
  elapsed_us: z.number().nonnegative(),
  busy_us: z.number().nonnegative(),
  rwnd_limited_us: z.number().nonnegative(),
  sndbuf_limited_us: z.number().nonnegative(),
  /** Σ over streams of the median delivery_rate read in the window, bits/s. */
  delivery_bps: z.number().nonnegative().optional(),
  /** Every stream's reads were application-limited: the delivery rate is the sender's pace, a floor of the path's. */
  delivery_app_limited: z.boolean().optional(),
  /** Mean over streams of the median smoothed RTT in the window, and the lowest min_rtt, µs. */
  srtt_us: z.number().nonnegative().optional(),
  min_rtt_us: z.number().nonnegative().optional(),
});
export type TcpPath = z.infer<typeof TcpPath>;

/** Everything diagnose() looks at, built from both ends' Results (see from-results.ts) or by hand in tests. */
export const DiagnosisInput = z.object({
  transport: z.enum(["tcp", "udp"]),
  test: z.enum(["stream", "rr", "crr"]),
  /** Goodput over the measured window, bits/s. */
  throughput_bps: z.number().nonnegative(),
  streams: z.number().int().positive(),
  /** The sender's smoothed RTT (TCP_INFO), µs. */
  rtt_us: z.number().positive().optional(),
  /** TCP segments retransmitted and sent over the window. */
  retransmits: z.number().nonnegative().optional(),
  segments_sent: z.number().nonnegative().optional(),
  /** UDP datagrams lost, %. */
  loss_percent: z.number().nonnegative().optional(),
  /** The sender's paced rate (-b), bits/s, when it set one. */
  target_bps: z.number().positive().optional(),
  /** What the senders sent over the window, bits/s (a UDP receiver's goodput is less by the loss). */
  sent_bps: z.number().nonnegative().optional(),
  link: LinkFacts,
  /** The window one stream can reach (link-buffers.ts streamWindowBytes), bytes. */
  window_bytes: z.number().positive().optional(),
  sender: EndHost,
  receiver: EndHost,
  /** --rr/--crr: transactions completed per second (all flows) and the client's median transaction time, µs. */
  transactions_per_second: z.number().nonnegative().optional(),
  latency_p50_us: z.number().positive().optional(),
  /** The sending end's TCP_INFO over the window (its Results' tcp_path). */
  path: TcpPath.optional(),
});
export type DiagnosisInput = z.infer<typeof DiagnosisInput>;

/** Where the TCP sender's time went, % (formulas.ts senderTimeShares): application = not busy; the rest shares of busy. */
export const SenderTime = z.object({
  busy_percent: z.number(),
  application_percent: z.number(),
  rwnd_limited_percent: z.number(),
  sndbuf_limited_percent: z.number(),
  network_percent: z.number(),
});
export type SenderTime = z.infer<typeof SenderTime>;

export const Diagnosis = z.object({
  verdict: Verdict,
  /** One or two lines: what limited the run, the figures that show it, and what to do. */
  evidence: z.array(z.string()).min(1).max(3),
  link_bps: z.number().positive().optional(),
  link_utilization_percent: z.number().nonnegative().optional(),
  busiest_cpu: z.object({ sender: CoreLoad.optional(), receiver: CoreLoad.optional() }),
  /** link speed (or, without one, the throughput) × RTT. */
  bdp_bytes: z.number().nonnegative().optional(),
  window_bytes: z.number().positive().optional(),
  /** UDP: datagrams lost; TCP: segments retransmitted; % of those sent. */
  loss_percent: z.number().nonnegative().optional(),
  sender_time: SenderTime.optional(),
  /** The path's bottleneck rate: the sending sockets' delivery rate, at least the goodput, bits/s. */
  bottleneck_bps: z.number().nonnegative().optional(),
  /** Smoothed RTT over min RTT of the sending sockets: the queue the run built, µs. */
  queueing_delay_us: z.number().nonnegative().optional(),
});
export type Diagnosis = z.infer<typeof Diagnosis>;
