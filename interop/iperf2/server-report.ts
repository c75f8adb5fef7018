import { z } from "zod";
import { ReportFlag, hasFlag } from "./flags.ts";
import { IPERF2_DATAGRAM_HEADER } from "./datagram.ts";
import { Iperf2WireError } from "./wire-error.ts";
import { i32, join64, joinSecUsec, need, put32, split64, splitSecUsec, u32 } from "./words.ts";

/**
 * The UDP server report ("server_hdr"), sent by the server to the client's address in answer to each FIN datagram.
 * 128 bytes, big-endian 32-bit words (offsets from the datagram start):
 *
 *   0..15 datagram block (zero)   16 flags   20 total bytes high   24 total bytes low   28 stop sec   32 stop usec
 *   36 lost (low)   40 out of order (low)   44 datagrams (low)   48 jitter sec   52 jitter usec
 *   -- extension, valid when flags has ReportFlag.extend --
 *   56 min transit   64 max transit   72 sum transit   80 mean transit   88 m2 transit   96 vd transit  (sec, usec pairs)
 *   104 transit count   108 packets in the PPS window   112 PPS window seconds
 *   -- 64-bit count extension --
 *   116 lost high   120 out of order high   124 datagrams high
 *
 * The stock client prints "Server Report" from words 16..55 alone (any datagram of 56+ bytes after its FIN is taken
 * as the report); words 56..115 feed its -e latency/PPS columns when the extend flag is set.
 */

export const REPORT_LENGTH = 128;
const BASE = IPERF2_DATAGRAM_HEADER; // 16
export const REPORT_MIN_LENGTH = BASE + 40; // 56: the part the stock client needs
const EXT_END = BASE + 100; // 116
const count = z.number().int().nonnegative();

export const ReportLatency = z.object({
  /** One-way transit times in seconds (receiver wall clock minus sender stamp). */
  minTransit: z.number(),
  maxTransit: z.number(),
  sumTransit: z.number(),
  meanTransit: z.number(),
  /** Welford sum of squared deviations, in microseconds squared (the unit the stock client expects). */
  m2Transit: z.number(),
  /** Not interpreted by the stock client's output; carried as the (whole, millionths) pair value. */
  vdTransit: z.number(),
  transitCount: count,
  /** PPS column = ppsPackets / ppsSeconds. */
  ppsPackets: count,
  ppsSeconds: count,
});
export type ReportLatency = z.infer<typeof ReportLatency>;

export const ServerReport = z.object({
  flags: z.number().int().min(0).max(0xffffffff),
  totalBytes: count,
  /** Seconds from the first datagram to the FIN, as measured by the server. */
  duration: z.number().nonnegative(),
  lost: count,
  outOfOrder: count,
  /** Datagrams the sender sent, FIN included (= -FIN seq). */
  datagrams: count,
  /** RFC 1889 interarrival jitter, seconds. */
  jitter: z.number().nonnegative(),
  latency: ReportLatency.optional(),
});
export type ServerReport = z.infer<typeof ServerReport>;
export type ServerReportInput = z.input<typeof ServerReport>;

/** True when the client should print the -e latency columns from this report. */
export function latencyValid(report: ServerReport): boolean {
  return report.latency !== undefined && hasFlag(report.flags, ReportFlag.extend);
}

const INT32_MAX = 0x7fffffff;

/** Values past what the signed whole-part word holds (a huge latency variance) are clamped, never wrapped. */
function putPair(out: Uint8Array, offset: number, value: number): void {
  const { sec, usec } = splitSecUsec(Math.max(-INT32_MAX, Math.min(INT32_MAX, value)));
  put32(out, offset, sec);
  put32(out, offset + 4, usec);
}

function pair(bytes: Uint8Array, offset: number): number {
  return joinSecUsec(i32(bytes, offset), i32(bytes, offset + 4));
}

/**
 * Always 128 bytes. Flags are written as given: a stock server without -e fills the latency words but leaves the
 * extend flag clear, and the client then ignores them.
 */
export function encodeServerReport(input: ServerReportInput): Uint8Array {
  const parsed = ServerReport.safeParse(input);
  if (!parsed.success) throw new Iperf2WireError("bad-value", `server report: ${parsed.error.issues[0]?.message ?? "invalid"}`);
  const r = parsed.data;
  const out = new Uint8Array(REPORT_LENGTH);
  put32(out, BASE, r.flags);
  const total = split64(r.totalBytes);
  put32(out, BASE + 4, total.high);
  put32(out, BASE + 8, total.low);
  putPair(out, BASE + 12, r.duration);
  const lost = split64(r.lost);
  const ooo = split64(r.outOfOrder);
  const dgrams = split64(r.datagrams);
  put32(out, BASE + 20, lost.low);
  put32(out, BASE + 24, ooo.low);
  put32(out, BASE + 28, dgrams.low);
  putPair(out, BASE + 32, r.jitter);
  if (r.latency) {
    const l = r.latency;
    putPair(out, BASE + 40, l.minTransit);
    putPair(out, BASE + 48, l.maxTransit);
    putPair(out, BASE + 56, l.sumTransit);
    putPair(out, BASE + 64, l.meanTransit);
    putPair(out, BASE + 72, l.m2Transit);
    putPair(out, BASE + 80, l.vdTransit);
    put32(out, BASE + 88, l.transitCount);
    put32(out, BASE + 92, l.ppsPackets);
    put32(out, BASE + 96, l.ppsSeconds);
  }
  put32(out, EXT_END, lost.high);
  put32(out, EXT_END + 4, ooo.high);
  put32(out, EXT_END + 8, dgrams.high);
  return out;
}

/**
 * Decodes a report datagram (whole datagram, block at 0..15 included). Needs 56 bytes; the latency words are read
 * when present (116+ bytes) whatever the flags say (`latencyValid` tells whether a client would print them), the
 * 64-bit high words only when the datagram is 128 bytes long.
 */
export function decodeServerReport(bytes: Uint8Array): ServerReport {
  need(bytes, REPORT_MIN_LENGTH, "server report");
  const flags = u32(bytes, BASE);
  const full = bytes.length >= REPORT_LENGTH;
  const high = (offset: number): number => (full ? u32(bytes, offset) : 0);
  const report: ServerReport = {
    flags,
    totalBytes: join64(u32(bytes, BASE + 4), u32(bytes, BASE + 8)),
    duration: Math.max(0, pair(bytes, BASE + 12)),
    lost: join64(high(EXT_END), u32(bytes, BASE + 20)),
    outOfOrder: join64(high(EXT_END + 4), u32(bytes, BASE + 24)),
    datagrams: join64(high(EXT_END + 8), u32(bytes, BASE + 28)),
    jitter: Math.max(0, pair(bytes, BASE + 32)),
  };
  if (bytes.length >= EXT_END) {
    report.latency = {
      minTransit: pair(bytes, BASE + 40),
      maxTransit: pair(bytes, BASE + 48),
      sumTransit: pair(bytes, BASE + 56),
      meanTransit: pair(bytes, BASE + 64),
      m2Transit: pair(bytes, BASE + 72),
      vdTransit: pair(bytes, BASE + 80),
      transitCount: u32(bytes, BASE + 88),
      ppsPackets: u32(bytes, BASE + 92),
      ppsSeconds: u32(bytes, BASE + 96),
    };
  }
  return report;
}
