import { z } from "zod";

/*
 * Kept apart from the decoder (tcp-info.ts), which Workers load: they need only the type, not zod.
 *
 * struct tcp_info (include/uapi/linux/tcp.h). The kernel copies min(our length, its size) and reports the length,
 * so an older kernel simply leaves the later fields out; those are absent here, never 0.
 */

const u32 = z.number().int().nonnegative();
const u64 = z.number().nonnegative();

export const TcpInfo = z.object({
  /** TcpState value (1 ESTABLISHED ... 10 LISTEN). */
  state: z.number().int(),
  ca_state: z.number().int().optional(),
  /** Consecutive RTO retransmissions of the head segment (u8). */
  retransmits: z.number().int().optional(),
  snd_wscale: z.number().int().optional(),
  rcv_wscale: z.number().int().optional(),
  /** The last delivery_rate sample was taken while the sender ran out of data: a floor, not the path's rate. */
  delivery_rate_app_limited: z.boolean().optional(),
  rto_us: u32.optional(),
  /** Delayed-ACK timeout, µs. */
  ato_us: u32.optional(),
  snd_mss: u32.optional(),
  rcv_mss: u32.optional(),
  /** Segments in flight; on a LISTEN socket: connections waiting in the accept queue. */
  unacked: u32.optional(),
  /** SACKed segments; on a LISTEN socket: the backlog limit in force. */
  sacked: u32.optional(),
  lost: u32.optional(),
  retrans: u32.optional(),
  pmtu: u32.optional(),
  rcv_ssthresh: u32.optional(),
  rtt_us: u32.optional(),
  rttvar_us: u32.optional(),
  snd_ssthresh: u32.optional(),
  snd_cwnd: u32.optional(),
  /** Segments of reordering the sender tolerates. */
  reordering: u32.optional(),
  total_retrans: u32.optional(),
  /** bytes/s */
  pacing_rate: u64.optional(),
  bytes_acked: u64.optional(),
  bytes_received: u64.optional(),
  segs_out: u32.optional(),
  segs_in: u32.optional(),
  notsent_bytes: u32.optional(),
  min_rtt: u32.optional(),
  /** bytes/s */
  delivery_rate: u64.optional(),
  /** µs */
  busy_time: u64.optional(),
  rwnd_limited: u64.optional(),
  sndbuf_limited: u64.optional(),
  delivered: u32.optional(),
  bytes_sent: u64.optional(),
  bytes_retrans: u64.optional(),
  snd_wnd: u32.optional(),
  rcv_wnd: u32.optional(),
});
export type TcpInfo = z.infer<typeof TcpInfo>;
