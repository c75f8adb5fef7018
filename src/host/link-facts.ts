import { z } from "zod";

/*
 * What an end knows of the link to its peer, as the results carry it. Schemas only: link.ts and link-buffers.ts read
 * the host, and the results schema must not reach them.
 */

export const LinkFacts = z.object({
  /** The interface the route to the peer leaves by; "lo" for loopback and this host's own addresses. */
  interface: z.string().optional(),
  /** bits/s; absent when unknown (loopback, a virtual interface, speed -1, no override). */
  speed_bps: z.number().positive().optional(),
  speed_source: z.enum(["sysfs", "--link-speed", "qdisc"]).optional(),
  /** A shaping qdisc at the interface's root (tbf, htb) and its rate, read over rtnetlink (src/host/shaper.ts). */
  shaper: z.object({ kind: z.string(), rate_bps: z.number().positive() }).optional(),
  mtu: z.number().int().positive().optional(),
  /** Why speed_bps is absent or what it stands for, for the report. */
  note: z.string().optional(),
});
export type LinkFacts = z.infer<typeof LinkFacts>;

/**
 * The ceilings Linux puts on a TCP socket's buffers, which bound its window: autotuning grows a buffer up to the
 * third field of tcp_rmem (receive) or tcp_wmem (send); an explicit SO_RCVBUF/SO_SNDBUF (-w) is capped by
 * net.core.rmem_max/wmem_max instead.
 */
export const TcpBufferCeilings = z.object({
  /** bytes: tcp_wmem max (autotuned send buffer). */
  send_max: z.number().int().positive().optional(),
  /** bytes: tcp_rmem max (autotuned receive buffer). */
  receive_max: z.number().int().positive().optional(),
  /** bytes: net.core.wmem_max / rmem_max (an explicit -w is capped here). */
  send_set_max: z.number().int().positive().optional(),
  receive_set_max: z.number().int().positive().optional(),
});
export type TcpBufferCeilings = z.infer<typeof TcpBufferCeilings>;
