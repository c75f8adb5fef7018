import { z } from "zod";

/**
 * What the server glue must build for one DO_OMNI request, derived from the request alone
 * (docs/protocols/netperf.md §6.1). The session hands it out in a "bind" action; the glue binds (and for TCP listens)
 * and reports the port and buffer sizes back.
 */
export const ServerDataSetup = z.object({
  protocol: z.enum(["tcp", "udp"]),
  family: z.enum(["ipv4", "ipv6"]),
  /** Address to bind: the request's netserver_ip, or the wildcard of the family. */
  bindAddress: z.string(),
  /** 0 = any port. */
  port: z.number().int().min(0).max(65535),
  serverReceives: z.boolean(),
  serverSends: z.boolean(),
  /** TCP_CRR: accept, one transaction, server closes, repeat. */
  connectPerTransaction: z.boolean(),
  /** > 0 in request/response tests, 0 in TCP_CC (a transaction is a connection accepted and closed), else -1. */
  requestSize: z.number().int(),
  responseSize: z.number().int(),
  /** SO_SNDBUF / SO_RCVBUF to set before bind; absent = keep the default. */
  sendBuffer: z.number().int().positive().optional(),
  recvBuffer: z.number().int().positive().optional(),
  noDelay: z.boolean(),
  keepAlive: z.boolean(),
  congestion: z.string().optional(),
  tos: z.number().int().min(1).max(255).optional(),
  priority: z.number().int().min(0).optional(),
  /** The client's data address and port (where a UDP server sends when it only transmits). */
  peer: z.object({ address: z.string(), port: z.number().int().min(0).max(65535) }),
  /** Measure host CPU over the data phase. */
  measureCpu: z.boolean(),
  /** Report the congestion-control name of the data socket in the results. */
  wantCongestionName: z.boolean(),
  /** The timed test's length in seconds (netperf -l N); 0 for count mode and untimed tests. Known at the request. */
  testLengthS: z.number().min(0),
  /** Count mode (-l -N): stop after this many bytes (stream) or transactions (RR); 0 = by time or end signal. */
  limitBytes: z.number().int().min(0),
  limitTransactions: z.number().int().min(0),
  /** Untimed tests (count mode, -l 0) have no stop timer: a silent peer ends the phase after this long; 0 = none. */
  idleTimeoutMs: z.number().int().min(0),
});
export type ServerDataSetup = z.infer<typeof ServerDataSetup>;

/** What the glue reports once the data socket is bound (and listening for TCP). */
export interface DataBound {
  port: number;
  /** SO_RCVBUF / SO_SNDBUF read back after setting (Linux doubles a set value). */
  recvBufSize: number;
  sendBufSize: number;
}

/** Once bound and the setup reply is out: how the data phase runs. */
export interface ServerDataRun {
  setup: ServerDataSetup;
  /** Bytes per receive / per send the server uses (from the reply it sent). */
  receiveSize: number;
  sendSize: number;
  /** Seconds the client asked for (0 in count mode). The session itself fires the stop at the padded deadline. */
  testLengthS: number;
}

export const CpuFigures = z.object({
  /** % of all CPUs busy over the data phase. */
  util: z.number(),
  user: z.number(),
  system: z.number(),
  iowait: z.number(),
  irq: z.number(),
  softirq: z.number(),
  peakCpuId: z.number().int(),
  peakCpuUtil: z.number(),
  /** CpuMethod code; 8 = /proc/stat. */
  method: z.number().int(),
  numCpus: z.number().int().positive(),
});
export type CpuFigures = z.infer<typeof CpuFigures>;

/** Counters of the server's side of one data phase. */
export interface ServerDataCounters {
  bytesReceived: number;
  recvCalls: number;
  bytesSent: number;
  sendCalls: number;
  transactions: number;
  /** Buffer sizes at the end of the test (autotuned values when the defaults were kept). */
  recvBufSize: number;
  sendBufSize: number;
  /** TCP_INFO total_retrans of the last data connection; -1 when unknown, UDP or CRR. */
  transportRetrans: number;
  congestionName: string;
  cpu?: CpuFigures;
}
