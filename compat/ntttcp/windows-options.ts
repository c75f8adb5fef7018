import { z } from "zod";

export const WindowsMapping = z.object({
  threads: z.number().int().min(1),
  /** null = '*' (no affinity). */
  cpu: z.number().int().min(0).nullable(),
  host: z.string().min(1),
});
export type WindowsMapping = z.infer<typeof WindowsMapping>;

/**
 * NTttcp for Windows 5.40 options after parsing and VerifyArgs (docs/protocols/ntttcp-windows.md §1), with its
 * defaults.
 */
export const WindowsOptions = z.object({
  role: z.enum(["sender", "receiver"]),
  mappings: z.array(WindowsMapping).min(1),
  /** -l bytes per send/recv (TCP 64 KiB, UDP 128). */
  bufferLen: z.number().int().positive(),
  /** Count mode (no -t): buffers per thread; null in time mode. */
  buffers: z.number().int().positive().nullable(),
  /** Time mode run time in seconds; null in count mode. */
  runTime: z.number().positive().nullable(),
  warmup: z.number().nonnegative(),
  cooldown: z.number().nonnegative(),
  /** Count-mode wait limit in ms (-t after -n, else 3 h). */
  countTimeoutMs: z.number().int().nonnegative(),
  basePort: z.number().int().positive(),
  syncPorts: z.boolean(),
  noSync: z.boolean(),
  timeoutMs: z.number().int().nonnegative(),
  asyncBuffers: z.number().int().nullable(),
  recvBuffer: z.number().int(),
  sendBuffer: z.number().int(),
  noDelay: z.boolean(),
  udp: z.boolean(),
  ipv6: z.boolean(),
  nic: z.string().optional(),
  xmlFile: z.string().optional(),
  verbose: z.boolean(),
  hidePerThread: z.boolean(),
  /** -thr KB/s per thread (×1024/1000 bytes per ms in the original). */
  throttleKBps: z.number().int().nonnegative(),
  verify: z.boolean(),
  /** -icp n (the I/O completion port's concurrency); the XML's max_active_threads. */
  maxActiveThreads: z.number().int().nonnegative(),
  /** Options accepted but with no effect here, with the reason (printed as a warning). */
  ignored: z.array(z.object({ option: z.string(), reason: z.string() })),
  /** What the real tool would have printed about the command line (e.g. a duplicated -m). */
  notes: z.array(z.string()),
});
export type WindowsOptions = z.infer<typeof WindowsOptions>;

export const WINDOWS_DEFAULTS = {
  basePort: 5001,
  tcpBufferLen: 65536,
  udpBufferLen: 128,
  buffers: 20 * 1024,
  timeoutMs: 600000,
  countTimeoutMs: 3 * 3600 * 1000,
  xmlFile: "xml.txt",
} as const;

/** ERROR_PARAMS: the status Windows NTttcp exits with on a bad command line. */
export const WINDOWS_EXIT_PARAMS = 9;
