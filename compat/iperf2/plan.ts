import { z } from "zod";
import { BB_MANDATORY, BB_MAX_SIZE } from "../../interop/iperf2/bounceback.ts";
import { TestAmount } from "../../interop/iperf2/client-request.ts";
import { FORMAT_LETTERS } from "./units.ts";

/** What an `anyperf iperf ...` command line asks for, in iperf 2.1.8's terms, checked and defaulted. */

export const DEFAULT_PORT = 5001;
/** iperf 2 UDP default: 1 Mbit/s with its binary mega (the header carries 0x00100000). */
export const DEFAULT_UDP_RATE = 1024 * 1024;

const UDP_LEN = 1470;
const UDP6_LEN = 1450;
const TCP_LEN = 128 * 1024;

const port = z.number().int().min(1).max(65535);

const common = {
  port: port.default(DEFAULT_PORT),
  udp: z.boolean().default(false),
  /** -B: local address (and for a client optionally a port) to bind. */
  bind: z.object({ host: z.string().min(1), port: z.number().int().min(0).max(65535).optional() }).optional(),
  /** -i: seconds between interval reports; 0 = none. */
  intervalS: z.number().min(0).default(0),
  enhanced: z.boolean().default(false),
  format: z.enum(FORMAT_LETTERS).default("a"),
  /** -y C */
  csv: z.boolean().default(false),
  ipv6: z.boolean().default(false),
  /** -w: socket buffer bytes. */
  window: z.number().int().positive().optional(),
  /** -l: read/write length (TCP) or datagram size (UDP); absent = iperf 2's default. */
  len: z.number().int().positive().max(64 * 1024 * 1024).optional(),
  mss: z.number().int().min(88).max(65535).optional(),
  noDelay: z.boolean().default(false),
  congestion: z.string().min(1).max(15).optional(),
  tos: z.number().int().min(0).max(255).default(0),
  sumOnly: z.boolean().default(false),
  hideIps: z.boolean().default(false),
  /** -o: write the report to this file instead of stdout. */
  output: z.string().min(1).optional(),
  printMss: z.boolean().default(false),
};

export const ServerPlan = z
  .object({
    role: z.literal("server"),
    ...common,
    daemon: z.boolean().default(false),
    /** -1: serve one client, then exit. */
    singleClient: z.boolean().default(false),
    /** -t on a server: stop listening (and exit) after this many seconds. */
    timeLimitS: z.number().positive().optional(),
  })
  // The read length the banner names: -l, else 1470 (UDP) or 128 KiB (TCP).
  .transform((p) => ({ ...p, len: p.len ?? (p.udp ? UDP_LEN : TCP_LEN) }));
export type ServerPlan = z.infer<typeof ServerPlan>;

const bbSize = z.number().int().min(BB_MANDATORY).max(BB_MAX_SIZE);

export const Bounceback = z
  .object({
    size: bbSize,
    replySize: bbSize,
    burst: z.number().int().min(1).max(1_000_000),
    /** Seconds between bursts; 0: back to back. */
    periodS: z.number().min(0).max(3600),
    holdUs: z.number().int().min(0).max(0xffffffff),
    quickAck: z.boolean(),
    /** No --bounceback-period: stock reports every second unless -i says otherwise. */
    defaultInterval: z.boolean(),
  })
  .refine((b) => b.replySize === b.size || b.size >= 64, { message: "a request that names its own reply size needs 64 bytes or more (--bounceback-request 64)", path: ["size"] });
export type Bounceback = z.infer<typeof Bounceback>;

const ClientFields = z.object({
  role: z.literal("client"),
  ...common,
  host: z.string().min(1),
  amount: TestAmount.default({ kind: "time", seconds: 10 }),
  /** -b; absent = unlimited for TCP, 1 Mbit/s for UDP. */
  rate: z.object({ value: z.number().int().nonnegative(), units: z.enum(["bps", "pps"]) }).optional(),
  parallel: z.number().int().min(1).max(1024).default(1),
  /** -r: the server sends back after the forward test; -d: at the same time, on new connections. */
  tradeoff: z.boolean().default(false),
  dual: z.boolean().default(false),
  /** -R: the server sends on the test connection; --full-duplex: both send on it. */
  reverse: z.boolean().default(false),
  fullDuplex: z.boolean().default(false),
  /** -L: where we listen for -r / -d connections (default: the -p port). */
  listenPort: port.optional(),
  /** -C: no header (for servers older than 2.0). */
  compat: z.boolean().default(false),
  peerDetect: z.boolean().default(false),
  noUdpFin: z.boolean().default(false),
  /** --bounceback and its options (docs/protocols/iperf2.md §2.8); absent for every other test. */
  bounceback: Bounceback.optional(),
  /** -u --trip-times: the header says our clock is in sync, so the server reports each datagram's one-way latency. */
  tripTimes: z.boolean().default(false),
  /**
   * --isochronous[=FPS:MEAN,STDDEV] (UDP): frames of MEAN / FPS bits on average, FPS a second, instead of a rate;
   * --ipg the gap between a frame's datagrams.
   */
  isochronous: z
    .object({ perSecond: z.number().positive().max(100_000), meanBps: z.number().positive().max(1e13), stddevBps: z.number().min(0).max(1e13), ipgMs: z.number().min(0).max(1000) })
    .optional(),
  /** --connect-only[=N]: connections per -P thread, each closed before a byte (no test). */
  connectOnly: z.number().int().min(1).max(1_000_000).optional(),
  /** --txstart-time: the epoch second (with fraction) the first write waits for. */
  txStartS: z.number().min(0).max(0xffffffff).optional(),
  /**
   * --tcp-quickack: whichever end reads the test's bytes sets TCP_QUICKACK before each read: the server, asked by the
   * header, and we ourselves with -R or --full-duplex.
   */
  tcpQuickAck: z.boolean().default(false),
  /** --tcp-write-times: each write is timed; the lines add its avg/min/max/stdev (cnt). */
  writeTimes: z.boolean().default(false),
  /** --histograms: the write times' histogram, printed per interval and at the end ("W8-PDF"). */
  histograms: z
    .object({
      binUs: z.number().int().min(1).max(1e9),
      unit: z.enum(["us", "ms"]),
      /** The bin width as given, in `unit`. */
      width: z.number().int().min(1),
      bins: z.number().int().min(1).max(1_000_000),
      lowerCi: z.number().min(0).max(100),
      upperCi: z.number().min(0).max(100),
    })
    .optional(),
});

/**
 * A client's write or datagram size and its rate, resolved here once: `len` is -l, else 1470 (UDP over IPv4), 1450
 * (UDP over IPv6), 128 KiB (TCP), and `lenSet` says whether -l was given (the header carries 0 otherwise, as stock's
 * does); `rate` is -b, else 1 Mbit/s for UDP, else null (TCP unlimited).
 */
export const ClientPlan = ClientFields.transform((p) => ({
  ...p,
  len: p.len ?? (p.udp ? (p.ipv6 ? UDP6_LEN : UDP_LEN) : TCP_LEN),
  lenSet: p.len !== undefined,
  // Stock's client prints its enhanced lines for --txstart-time, --tcp-write-times, --histograms and --isochronous
  // without -e.
  enhanced: p.enhanced || p.txStartS !== undefined || p.writeTimes || p.histograms !== undefined || p.isochronous !== undefined,
  // 2.1.8's TCP client times its writes for --histograms.
  writeTimes: p.writeTimes || p.histograms !== undefined,
  rate: p.rate && p.rate.value > 0 ? p.rate : p.udp ? { value: DEFAULT_UDP_RATE, units: "bps" as const } : null,
}));
export type ClientPlan = z.infer<typeof ClientPlan>;
export type ClientPlanInput = z.input<typeof ClientPlan>;

export const Iperf2Plan = z.discriminatedUnion("role", [ServerPlan, ClientPlan]);
export type Iperf2Plan = z.infer<typeof Iperf2Plan>;
