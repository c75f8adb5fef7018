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
export const EndHost = HostWindow.pick({ cores: true, perCpu: true, tcp: true, process: true });
export type EndHost = z.infer<typeof EndHost>;

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
  link: LinkFacts,
  /** The window one stream can reach (link-buffers.ts streamWindowBytes), bytes. */
  window_bytes: z.number().positive().optional(),
  sender: EndHost,
  receiver: EndHost,
});
export type DiagnosisInput = z.infer<typeof DiagnosisInput>;

export const Diagnosis = z.object({
  verdict: Verdict,
  /** One or two lines: what limited the run, the figures that show it, and what to do. */
  evidence: z.array(z.string()).min(1).max(2),
  link_bps: z.number().positive().optional(),
  link_utilization_percent: z.number().nonnegative().optional(),
  busiest_cpu: z.object({ sender: CoreLoad.optional(), receiver: CoreLoad.optional() }),
  /** link speed (or, without one, the throughput) × RTT. */
  bdp_bytes: z.number().nonnegative().optional(),
  window_bytes: z.number().positive().optional(),
  /** UDP: datagrams lost; TCP: segments retransmitted; % of those sent. */
  loss_percent: z.number().nonnegative().optional(),
});
export type Diagnosis = z.infer<typeof Diagnosis>;
