import { z } from "zod";
import { WINDOWS_TOKEN_PORT_OFFSET } from "../../interop/ntttcp/windows-token.ts";
import type { LinuxOptions } from "./linux-options.ts";
import type { WindowsOptions } from "./windows-options.ts";

/**
 * What an ntttcp command means, in either dialect: exactly which ports are used, how many threads and connections
 * go to each, which start protocol, and for how long. The glue builds its StreamSpecs from this alone.
 */

export const PlanThread = z.object({
  /** Result row index: the sender thread index, or the receiver port index. */
  index: z.number().int().nonnegative(),
  host: z.string().min(1),
  port: z.number().int().min(1).max(65535),
  /** Sender: sockets this thread opens. Receiver: connections it takes (1 = Windows accept-once, 0 = any). */
  connections: z.number().int().nonnegative(),
  /** Requested CPU, null = any. */
  cpu: z.number().int().nonnegative().nullable(),
});
export type PlanThread = z.infer<typeof PlanThread>;

export const NtttcpPlan = z.object({
  dialect: z.enum(["windows", "linux"]),
  role: z.enum(["sender", "receiver"]),
  protocol: z.enum(["tcp", "udp"]),
  family: z.enum(["ipv4", "ipv6"]),
  basePort: z.number().int().min(1).max(65535),
  sync: z.discriminatedUnion("kind", [
    z.object({ kind: z.literal("none") }),
    /**
     * One TCP connection to basePort−1 (4-byte big-endian messages). `windowsTokens`: a receiver that also serves the
     * senders that never contact it (Windows tokens on data port + this offset, no-sync senders by their first byte).
     */
    z.object({
      kind: z.literal("linux"),
      port: z.number().int().min(1).max(65535),
      multiClient: z.boolean(),
      lastClient: z.boolean(),
      windowsTokens: z.number().int().positive().optional(),
    }),
    /** One TCP connection per thread to data port + offset (1 byte each way). */
    z.object({ kind: z.literal("windows"), offset: z.number().int().positive() }),
  ]),
  /** Sender: one per thread. Receiver: one per listening port. */
  threads: z.array(PlanThread).min(1),
  /** Distinct data ports, ascending. */
  ports: z.array(z.number().int()),
  totalConnections: z.number().int().nonnegative(),
  writeSize: z.number().int().positive(),
  readSize: z.number().int().positive(),
  warmup: z.number().nonnegative(),
  duration: z.number().nonnegative(),
  cooldown: z.number().nonnegative(),
  /** Windows count mode: bytes each sender thread sends (buffers × length); the test then has no time limit. */
  countBytesPerThread: z.number().int().positive().nullable(),
  /** Total bits/s cap (Linux -B), or per-thread bytes/s (Windows -thr); 0 = none. */
  rateBitsPerSecondPerThread: z.number().nonnegative(),
  pacingBytesPerSecondPerSocket: z.number().nonnegative(),
  noDelay: z.boolean(),
  sendBuffer: z.number().int().positive().optional(),
  recvBuffer: z.number().int().positive().optional(),
  sourceAddress: z.string().optional(),
  sourcePort: z.number().int().nonnegative(),
  hold: z.boolean(),
  outputs: z.object({
    xml: z.object({ path: z.string(), append: z.boolean() }).optional(),
    json: z.string().optional(),
    log: z.string().optional(),
    verbose: z.boolean(),
    quiet: z.boolean(),
    hidePerThread: z.boolean(),
  }),
  ignored: z.array(z.object({ option: z.string(), reason: z.string() })),
});
export type NtttcpPlan = z.infer<typeof NtttcpPlan>;

function checkPort(p: number, what: string): number {
  if (!Number.isInteger(p) || p < 1 || p > 65535) throw new RangeError(`${what} ${p} is outside 1..65535`);
  return p;
}

export function planFromLinux(o: LinuxOptions, opts: WindowsPlanOptions = {}): NtttcpPlan {
  const threads: PlanThread[] = [];
  const cpu = o.cpuAffinity >= 0 ? o.cpuAffinity : null;
  if (o.role === "receiver") {
    for (let t = 0; t < o.ports; t++) threads.push({ index: t, host: o.address, port: checkPort(o.basePort + t, "data port"), connections: 0, cpu });
  } else {
    // Thread k = t·n + j connects l sockets to port B+t (docs/protocols/ntttcp-linux.md §2).
    for (let t = 0; t < o.ports; t++) {
      for (let j = 0; j < o.threadsPerPort; j++) {
        threads.push({ index: t * o.threadsPerPort + j, host: o.address, port: checkPort(o.basePort + t, "data port"), connections: o.connsPerThread, cpu });
      }
    }
  }
  const ignored: { option: string; reason: string }[] = [];
  if (o.daemon) ignored.push({ option: "-D", reason: "daemon mode is not offered; run it in the background with your shell" });
  if (o.epoll) ignored.push({ option: "-e", reason: "the receiver always uses the runtime's event loop" });
  const udp = o.udp;
  // A TCP receiver in sync mode (not -M, whose senders all speak Linux sync) also answers Windows token contacts,
  // as `anyperf serve` does (docs/protocols/ntttcp-interop.md §5.2), where every token port is a real port.
  const offset = opts.tokenOffset ?? WINDOWS_TOKEN_PORT_OFFSET;
  const tokens = o.role === "receiver" && !udp && !o.multiClient && o.basePort + o.ports - 1 + offset <= 65535 ? { windowsTokens: offset } : {};
  return NtttcpPlan.parse({
    dialect: "linux",
    role: o.role,
    protocol: udp ? "udp" : "tcp",
    family: o.ipv6 ? "ipv6" : "ipv4",
    basePort: checkPort(o.basePort, "base port"),
    sync: o.noSync
      ? { kind: "none" }
      : { kind: "linux", port: checkPort(o.basePort - 1, "sync port (base port − 1)"), multiClient: o.multiClient, lastClient: o.lastClient, ...tokens },
    threads,
    ports: [...new Set(threads.map((t) => t.port))].sort((a, b) => a - b),
    totalConnections: o.role === "sender" ? o.ports * o.threadsPerPort * o.connsPerThread : 0,
    writeSize: Math.max(1, o.sendSize),
    readSize: Math.max(1, o.recvSize),
    warmup: o.warmup,
    duration: o.duration,
    cooldown: o.cooldown,
    countBytesPerThread: null,
    rateBitsPerSecondPerThread: o.role === "sender" && o.bandwidth > 0 ? o.bandwidth / threads.length : 0,
    pacingBytesPerSecondPerSocket:
      o.role === "sender" && o.fqRate > 0 ? Math.floor(o.fqRate / 8 / (o.ports * o.threadsPerPort * o.connsPerThread)) : 0,
    noDelay: o.noDelay,
    sourceAddress: o.clientAddress,
    sourcePort: o.role === "sender" ? o.sourcePort : 0,
    hold: o.hold,
    outputs: {
      xml: o.xmlFile !== undefined ? { path: o.xmlFile, append: false } : undefined,
      json: o.jsonFile,
      log: o.logFile,
      verbose: o.verbose,
      quiet: o.quiet,
      hidePerThread: false,
    },
    ignored,
  });
}

export interface WindowsPlanOptions {
  /** Token ports are data port + this; the real product uses 1000, tests may use less to stay in their port range. */
  tokenOffset?: number;
}

export function planFromWindows(o: WindowsOptions, opts: WindowsPlanOptions = {}): NtttcpPlan {
  const threads: PlanThread[] = [];
  // Thread i uses data port base+i whatever its mapping's host (docs/protocols/ntttcp-windows.md §2); one socket each.
  for (const m of o.mappings) {
    for (let k = 0; k < m.threads; k++) {
      const index = threads.length;
      threads.push({ index, host: m.host, port: checkPort(o.basePort + index, "data port"), connections: 1, cpu: m.cpu });
    }
  }
  const offset = opts.tokenOffset ?? WINDOWS_TOKEN_PORT_OFFSET;
  if (!o.noSync) for (const t of threads) checkPort(t.port + offset, "token port (data port + 1000)");
  return NtttcpPlan.parse({
    dialect: "windows",
    role: o.role,
    protocol: o.udp ? "udp" : "tcp",
    family: o.ipv6 ? "ipv6" : "ipv4",
    basePort: o.basePort,
    sync: o.noSync ? { kind: "none" } : { kind: "windows", offset },
    threads,
    ports: threads.map((t) => t.port),
    totalConnections: threads.length,
    writeSize: o.bufferLen,
    readSize: o.bufferLen,
    warmup: o.warmup,
    duration: o.runTime ?? 0,
    cooldown: o.cooldown,
    countBytesPerThread: o.buffers !== null ? o.buffers * o.bufferLen : null,
    // -thr is KB/s per thread, converted by the original as value·1024/1000 bytes per ms = value·1024 bytes/s.
    rateBitsPerSecondPerThread: o.role === "sender" && o.throttleKBps > 0 ? o.throttleKBps * 1024 * 8 : 0,
    pacingBytesPerSecondPerSocket: 0,
    noDelay: o.noDelay,
    sendBuffer: o.sendBuffer > 0 ? o.sendBuffer : undefined,
    recvBuffer: o.recvBuffer > 0 ? o.recvBuffer : undefined,
    sourceAddress: o.nic,
    sourcePort: 0,
    hold: false,
    outputs: {
      xml: o.xmlFile !== undefined ? { path: o.xmlFile, append: true } : undefined,
      verbose: o.verbose,
      quiet: false,
      hidePerThread: o.hidePerThread,
    },
    ignored: [
      ...o.ignored,
      ...(o.recvBuffer === 0 || o.sendBuffer === 0 ? [{ option: "-rb/-sb 0", reason: "a zero socket buffer cannot be set on Linux; the OS default is kept" }] : []),
    ],
  });
}
