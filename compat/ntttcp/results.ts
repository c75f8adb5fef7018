import { z } from "zod";

/**
 * What one ntttcp run measured, handed by the glue to every formatter. A host figure left undefined could not be
 * measured here and is printed as n/a (never as 0).
 */

const opt = z.number().optional();

export const HostFigures = z.object({
  /** Processors (cpuN lines of /proc/stat). */
  cpuCores: opt,
  cpuMHz: opt,
  /** System-wide shares of CPU time over the window, in % (deltas of the aggregate /proc/stat line). */
  userPct: opt,
  systemPct: opt,
  idlePct: opt,
  iowaitPct: opt,
  softirqPct: opt,
  /** This process's CPU time / wall time, in % (can pass 100 with several threads). */
  processCpuPct: opt,
  /** System-wide TCP (or UDP) counters over the window, from /proc/net/snmp. */
  retransSegs: opt,
  segmentsOut: opt,
  segmentsIn: opt,
  /** TCP AttemptFails, or UDP InErrors: what Windows prints as Errors. */
  errors: opt,
  /** /proc/net/netstat rates for --show-tcp-retrans, per second. */
  tcpRetrans: z
    .object({
      retransSegsPerSec: z.number(),
      lostRetransPerSec: z.number(),
      synRetransPerSec: z.number(),
      fastRetransPerSec: z.number(),
      forwardRetransPerSec: z.number(),
      slowStartRetransPerSec: z.number(),
      retransFailPerSec: z.number(),
    })
    .optional(),
  nicTxPackets: opt,
  nicRxPackets: opt,
  interrupts: opt,
  /** Softirqs over the window, every kind: what the Windows dialect reports as DPCs (Linux has no DPCs). */
  dpcs: opt,
  /** Mean tcpi_rtt over sender threads, µs. */
  tcpRttUs: opt,
});
export type HostFigures = z.infer<typeof HostFigures>;

export const ThreadResult = z.object({
  index: z.number().int().nonnegative(),
  bytes: z.number().nonnegative(),
  /** Counted send()/recv() calls, when the data plane counts them. */
  ios: opt,
  seconds: z.number().nonnegative(),
});
export type ThreadResult = z.infer<typeof ThreadResult>;

export const NtttcpResults = z.object({
  role: z.enum(["sender", "receiver"]),
  protocol: z.enum(["tcp", "udp"]),
  /** Measured window T in seconds (warm-up and cool-down excluded). */
  seconds: z.number().nonnegative(),
  threads: z.array(ThreadResult),
  totalBytes: z.number().nonnegative(),
  /** Sender: connections that were established ("N connections tested"). */
  connections: z.number().int().nonnegative(),
  host: HostFigures,
  computerName: z.string(),
  /** First line of `uname -a`, for the Linux XML/JSON. */
  os: z.string(),
});
export type NtttcpResults = z.infer<typeof NtttcpResults>;
