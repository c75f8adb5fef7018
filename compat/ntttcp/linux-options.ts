import { z } from "zod";

/**
 * ntttcp-for-linux 1.4.3 options after parsing and verify_args(), with its defaults
 * (docs/protocols/ntttcp-linux.md §1.1).
 */
export const LinuxOptions = z.object({
  role: z.enum(["sender", "receiver"]),
  /** -r/-s/-m address: bind address (receiver) or receiver address (sender). */
  address: z.string(),
  /** -a: sender source address. */
  clientAddress: z.string().optional(),
  daemon: z.boolean(),
  multiClient: z.boolean(),
  lastClient: z.boolean(),
  epoll: z.boolean(),
  hold: z.boolean(),
  ports: z.number().int().min(1).max(512),
  threadsPerPort: z.number().int().min(1).max(25600),
  connsPerThread: z.number().int().min(1).max(1000),
  /** -1 = no affinity ('*'). */
  cpuAffinity: z.number().int(),
  ipv6: z.boolean(),
  udp: z.boolean(),
  basePort: z.number().int(),
  /** -f: first source port; 0 = ephemeral. */
  sourcePort: z.number().int().min(0),
  recvSize: z.number().nonnegative(),
  sendSize: z.number().nonnegative(),
  /** -B bits/s, 0 = none. */
  bandwidth: z.number().nonnegative(),
  fqRate: z.number().nonnegative(),
  noDelay: z.boolean(),
  warmup: z.number().int().min(0),
  duration: z.number().int().min(0),
  cooldown: z.number().int().min(0),
  noSync: z.boolean(),
  logFile: z.string().optional(),
  xmlFile: z.string().optional(),
  jsonFile: z.string().optional(),
  quiet: z.boolean(),
  verbose: z.boolean(),
  showTcpRetrans: z.boolean(),
  showNicPackets: z.string(),
  showDevInterrupts: z.string(),
});
export type LinuxOptions = z.infer<typeof LinuxOptions>;

export const LINUX_DEFAULTS = {
  ports: 16,
  threadsPerPort: 4,
  connsPerThread: 1,
  basePort: 5001,
  sourcePort: 25001,
  recvSize: 64 * 1024,
  sendSize: 128 * 1024,
  duration: 60,
  maxUdpSend: 65535 - 8 - 20,
  logFile: "ntttcp-for-linux-log.log",
  xmlFile: "ntttcp-for-linux-log.xml",
  jsonFile: "ntttcp-for-linux-log.json",
} as const;

/** A line the real tool prints while checking its arguments, kept so we print the same. */
export interface ParseMessage {
  level: "INFO" | "ERR" | "DBG";
  text: string;
}
