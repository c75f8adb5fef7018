import { z } from "zod";
import { IsochSettings, readIsochSettings } from "./isoch-frames.ts";
import { type ClientHeader, IPERF_2_1_8, type Transport, VersionWords, congestionName } from "./client-header.ts";
import { HeaderFlag, LowerOptionFlag, OptionFlag, THREADS_HAVE_TRANSFER_ID, THREAD_COUNT_MASK, TRANSFER_ID_SHIFT, hasFlag } from "./flags.ts";
import { Iperf2WireError } from "./wire-error.ts";
import { put32, u32 } from "./words.ts";

/**
 * What a client header asks the server to do, in plain terms. `describeClientHeader` reads it from a decoded header
 * (server side); `buildClientHeader` writes the header a 2.1.8 client would send for it (client side).
 */

/** Longest time the amount word carries: -2^31 hundredths of a second (stock sign-extends and negates it). */
const MAX_SECONDS = 2 ** 31 / 100;

export const TestAmount = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("time"), seconds: z.number().positive().max(MAX_SECONDS) }),
  z.object({ kind: z.literal("bytes"), bytes: z.number().int().nonnegative() }),
]);
export type TestAmount = z.infer<typeof TestAmount>;

export const ClientRequest = z.object({
  transport: z.enum(["tcp", "udp"]),
  /** Who sends on the test connection: the client (default), the server (-R), or both (--full-duplex). */
  direction: z.enum(["forward", "reverse", "full-duplex"]).default("forward"),
  /** The server opens a second connection back to the client: at once (-d) or after the forward test (-r). */
  connectBack: z.enum(["none", "dual", "tradeoff"]).default("none"),
  amount: TestAmount,
  /** Target rate in `rateUnits`; 0 = unlimited. */
  rate: z.number().int().nonnegative().default(0),
  rateUnits: z.enum(["bps", "pps"]).default("bps"),
  /** -l if given, else 0 (the peer uses its default). */
  bufLen: z.number().int().nonnegative().max(0x7fffffff).default(0),
  numThreads: z.number().int().min(1).max(0x7fffffff).default(1),
  /** The port the client listens on for -r / -d (iperf 2 -L, defaults to the server port). */
  listenPort: z.number().int().min(0).max(65535).default(0),
  tos: z.number().int().min(0).max(255).default(0),
  peerDetect: z.boolean().default(false),
  noUdpFin: z.boolean().default(false),
  /** --isochronous: the client sends frames at a frame rate (docs/protocols/iperf2.md §2.2). */
  isochronous: z.boolean().default(false),
  /**
   * TCP --tcp-quickack: the receiving end sets TCP_QUICKACK before each read. Stock clients flag it only when the
   * server receives (not -R), and the server then also notes "(qack)".
   */
  tcpQuickAck: z.boolean().default(false),
  /** --trip-times: the client's clock is in sync with ours, so the receiver reports latency (enhanced reports). */
  tripTimes: z.boolean().default(false),
  version: VersionWords.default(IPERF_2_1_8),
  /** false = the classic 24-byte header of iperf 2.0 and older (only sent when connecting back). */
  extended: z.boolean().default(true),
  /** 2.2 --sync-transfer-id: the client's own number for this connection, which the server reports it under. */
  transferId: z.number().int().min(0).max(0x7ff).optional(),
  /** 2.2 barrier time (offset 60, microseconds), when the lower option word flags it. */
  barrierUs: z.number().int().nonnegative().optional(),
  /** 2.2 -Z: the congestion control the client asks the server to use too. */
  congestion: z.string().max(32).optional(),
  /** --txstart-time: the epoch time the client starts sending (offset 64, seconds and microseconds). */
  startTime: z.object({ sec: z.number().int().min(0).max(0xffffffff), usec: z.number().int().min(0).max(999_999) }).optional(),
  /** 2.2 --tcp-write-prefetch with -R / --full-duplex: TCP_NOTSENT_LOWAT for the server's sending socket, bytes. */
  writePrefetch: z.number().int().positive().max(0x7fffffff).optional(),
  /** --fq-rate: the pacing the client asks for the traffic the server sends it (-R, --full-duplex, -d, -r), bytes/s. */
  fqRate: z.number().int().positive().max(Number.MAX_SAFE_INTEGER).optional(),
  /** TCP --isochronous: the frames the client asks us to send it (-R), from its header's isochronous settings. */
  isochSettings: IsochSettings.optional(),
  /** UDP --trip-times: the test's start (wall clock), which 2.1.8 carries at datagram offset 112, past its header. */
  tripStart: z.object({ sec: z.number().int().min(0).max(0xffffffff), usec: z.number().int().min(0).max(999_999) }).optional(),
});
export type ClientRequest = z.infer<typeof ClientRequest>;
export type ClientRequestInput = z.input<typeof ClientRequest>;

/** Rate units byte at offset 55 (low byte of the rate-high word) when the rate is in packets per second. */
const RATE_UNITS_PPS = 1;

export function amountFromWord(word: number): TestAmount {
  return word < 0 ? { kind: "time", seconds: -word / 100 } : { kind: "bytes", bytes: word };
}

export function amountToWord(amount: TestAmount): number {
  if (amount.kind === "time") return -Math.max(1, Math.min(MAX_SECONDS * 100, Math.round(amount.seconds * 100)));
  // iperf 2.1.8 truncates -n above 2 GiB modulo 2^32; clamping keeps the request sane instead.
  return Math.min(amount.bytes, 0x7fffffff);
}

export function describeClientHeader(h: ClientHeader, transport: Transport): ClientRequest {
  const options = h.ext?.options ?? 0;
  const direction = hasFlag(options, OptionFlag.fullDuplex)
    ? "full-duplex"
    : hasFlag(options, OptionFlag.reverse)
      ? "reverse"
      : "forward";
  // --sync-transfer-id puts its id in numThreads (a thread count never reaches bit 31); 2.2.1 sets version1 with it,
  // iperf 2's master does not. Either way no connect-back is asked for.
  const transferId = hasFlag(h.numThreads, THREADS_HAVE_TRANSFER_ID) ? (h.numThreads >>> TRANSFER_ID_SHIFT) & 0x7ff : undefined;
  const connectBack = !hasFlag(h.flags, HeaderFlag.version1) || transferId !== undefined ? "none" : hasFlag(h.flags, HeaderFlag.runNow) ? "dual" : "tradeoff";
  const pps = h.ext !== undefined && (h.ext.rateUnits === RATE_UNITS_PPS || hasFlag(options, OptionFlag.unitsPps));
  // Clients before the extended header carried the UDP rate in the window/bandwidth word.
  const rate = h.ext ? h.ext.rate : transport === "udp" ? Math.max(0, h.winBand) : 0;
  return {
    transport,
    direction,
    connectBack,
    amount: amountFromWord(h.amount),
    rate,
    rateUnits: pps ? "pps" : "bps",
    bufLen: Math.max(0, h.bufLen),
    numThreads: Math.max(1, transferId !== undefined ? h.numThreads & THREAD_COUNT_MASK : h.numThreads),
    listenPort: h.port >= 0 && h.port <= 65535 ? h.port : 0,
    tos: (h.ext?.tos ?? 0) & 0xff,
    peerDetect: hasFlag(h.flags, HeaderFlag.peerDetect),
    noUdpFin: hasFlag(options, OptionFlag.noUdpFin),
    tripTimes: hasFlag(options, OptionFlag.tripTimes),
    isochronous: hasFlag(options, OptionFlag.isochronous),
    tcpQuickAck: transport === "tcp" && hasFlag(options, OptionFlag.tcpQuickAck),
    version: h.ext?.version ?? { high: 0, low: 0 },
    extended: h.ext !== undefined,
    transferId,
    ...fqRate(h),
    ...tcpIsochSettings(h, transport),
    ...writePrefetch(h, direction),
    ...epochStart(h),
    ...extensions22(h, transport),
  };
}

/** The write prefetch a 2.2 client asks of the server's sender, as 2.2.1's listener takes it: only when the server sends. */
function writePrefetch(h: ClientHeader, direction: ClientRequest["direction"]): { writePrefetch?: number } {
  const bytes = h.ext?.writePrefetch ?? 0;
  if (!hasFlag(h.ext?.options ?? 0, OptionFlag.writePrefetch) || direction === "forward" || bytes <= 0 || bytes > 0x7fffffff) return {};
  return { writePrefetch: bytes };
}

/**
 * A TCP --isochronous client's isochronous settings: at header offset 80 from 2.1.8 and 2.2.1 alike, inside its
 * announced 112 bytes [wire: both clients' -R requests] (UDP ones lie past the announced header: the UDP server
 * session reads them from the datagram).
 */
const TCP_ISOCH_SETTINGS_AT = 80 - 60;

function tcpIsochSettings(h: ClientHeader, transport: Transport): { isochSettings?: IsochSettings } {
  if (transport !== "tcp" || !hasFlag(h.ext?.options ?? 0, OptionFlag.isochronous)) return {};
  const s = readIsochSettings(h.tail, TCP_ISOCH_SETTINGS_AT);
  return s ? { isochSettings: s } : {};
}

/** Offset of --txstart-time's seconds and microseconds past the 60-byte header: 64 and 68. */
const START_AT = 64 - 60;

/** The epoch time a --txstart-time client starts sending, when its option word flags one and the header covers it. */
function epochStart(h: ClientHeader): { startTime?: { sec: number; usec: number } } {
  if (!hasFlag(h.ext?.options ?? 0, OptionFlag.epochStart) || h.tail.length < START_AT + 8) return {};
  const usec = u32(h.tail, START_AT + 4);
  return usec <= 999_999 ? { startTime: { sec: u32(h.tail, START_AT), usec } } : {};
}

/** Offset of --fq-rate's low and high words (bytes/s) past the 60-byte header: 72 and 76 [wire: 2.1.8 and 2.2.1]. */
const FQ_RATE_AT = 72 - 60;

/** The pacing a client's --fq-rate asks for, when its option word flags one and the header covers it. */
function fqRate(h: ClientHeader): { fqRate?: number } {
  if (!hasFlag(h.ext?.options ?? 0, OptionFlag.fqRateSet) || h.tail.length < FQ_RATE_AT + 8) return {};
  const rate = u32(h.tail, FQ_RATE_AT) + u32(h.tail, FQ_RATE_AT + 4) * 2 ** 32;
  // Zero asks for nothing; past 2^53 bytes/s nothing a socket could be paced to.
  return rate > 0 && rate <= Number.MAX_SAFE_INTEGER ? { fqRate: rate } : {};
}

/** Offset of the 2.2 barrier word past the 60-byte 2.1.8 header, i.e. in the header's tail. */
const BARRIER_AT = 60 - 60;

/** The 2.2 fields the lower option word announces (the -Z name only on TCP: UDP headers have no such block). */
function extensions22(h: ClientHeader, transport: Transport): { barrierUs?: number; congestion?: string } {
  const lower = h.ext?.lowerOptions ?? 0;
  const out: { barrierUs?: number; congestion?: string } = {};
  if (hasFlag(lower, LowerOptionFlag.barrierTime) && h.tail.length >= BARRIER_AT + 4) out.barrierUs = u32(h.tail, BARRIER_AT);
  const congestion = transport === "tcp" ? congestionName(h) : undefined;
  if (congestion !== undefined) out.congestion = congestion;
  return out;
}

/**
 * UDP --trip-times and --isochronous: 2.1.8 announces a 92-byte header (datagram length 108) whose last 32 bytes
 * hold the frame fields (zero without frames); the server times each datagram by its own send stamp (captured,
 * docs/protocols/iperf2.md §3.1, §3.6).
 */
const UDP_TRIP_TIMES_TAIL = 32;

/**
 * Offsets 60..80 as 2.1.8 sends them with --txstart-time: barrier 0, start sec and usec, fq rate 0
 * (docs/protocols/iperf2.md §2.2).
 */
function startTimeTail(t: { sec: number; usec: number }): Uint8Array<ArrayBuffer> {
  const tail = new Uint8Array(20);
  put32(tail, 4, t.sec);
  put32(tail, 8, t.usec);
  return tail;
}

/**
 * The tail holding a start time, when there is one: --txstart-time's, or --trip-times' (a TCP server checks that one
 * against its clock). Empty otherwise.
 */
function timeTail(r: ClientRequest): Uint8Array<ArrayBuffer> {
  const t = r.startTime ?? (r.tripTimes || r.isochronous ? r.tripStart : undefined);
  return t ? startTimeTail(t) : new Uint8Array(0);
}

/**
 * The header a 2.1.8 client sends for `input` (flag words as seen in iperf2-tcp-header-variants.txt). Returns null
 * for a classic-mode request that needs no header (iperf 2 -C): the data then starts at once.
 */
export function buildClientHeader(input: ClientRequestInput): ClientHeader | null {
  const parsed = ClientRequest.safeParse(input);
  if (!parsed.success) throw new Iperf2WireError("bad-value", `client request: ${parsed.error.issues[0]?.message ?? "invalid"}`);
  const r = parsed.data;
  let flags = 0;
  if (r.connectBack !== "none") flags |= HeaderFlag.version1;
  if (r.connectBack === "dual") flags |= HeaderFlag.runNow;
  let options = 0;
  if (r.extended) {
    flags |= HeaderFlag.extend | HeaderFlag.lengthValid;
    if (r.transport === "udp") flags |= HeaderFlag.seqno64;
    if (r.direction === "reverse") options |= OptionFlag.reverse;
    if (r.direction === "full-duplex") options |= OptionFlag.fullDuplex;
    if (r.direction !== "forward" || r.peerDetect) flags |= HeaderFlag.version2;
    if (r.peerDetect) flags |= HeaderFlag.peerDetect;
    if (r.transport === "udp" && r.noUdpFin) options |= OptionFlag.noUdpFin;
    if (r.transport === "udp" && (r.direction !== "forward" || r.noUdpFin)) flags |= HeaderFlag.udpTests;
    if (r.startTime) options |= OptionFlag.epochStart;
    if (r.tripTimes) options |= OptionFlag.tripTimes;
    if (r.transport === "tcp" && r.tcpQuickAck && r.direction !== "reverse") options |= OptionFlag.tcpQuickAck;
    if (r.transport === "udp" && r.tripTimes) flags |= HeaderFlag.udpTests;
    if (r.isochronous) options |= OptionFlag.isochronous;
    if (r.transport === "udp" && r.isochronous) flags |= HeaderFlag.udpTests;
  } else if (r.connectBack === "none") {
    return null;
  }
  const header: ClientHeader = {
    flags: flags >>> 0,
    numThreads: r.numThreads,
    port: r.listenPort,
    bufLen: r.bufLen,
    winBand: r.extended || r.transport === "tcp" ? 0 : Math.min(r.rate, 0x7fffffff),
    amount: amountToWord(r.amount),
    tail: !r.extended ? new Uint8Array(0) : r.transport === "udp" && (r.tripTimes || r.isochronous) ? new Uint8Array(UDP_TRIP_TIMES_TAIL) : timeTail(r),
  };
  if (r.extended) {
    header.ext = {
      type: 0,
      length: 0,
      options,
      lowerOptions: 0,
      version: r.version,
      tos: r.tos,
      rate: r.rate,
      rateUnits: r.rateUnits === "pps" ? RATE_UNITS_PPS : 0,
      writePrefetch: 0,
    };
  }
  return header;
}
