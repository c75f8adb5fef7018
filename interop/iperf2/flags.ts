/**
 * Bits of the iperf 2 header flags words, as observed on the wire from iperf 2.1.8 (see docs/protocols/iperf2.md §2.4)
 * and named after iperf 2's own vocabulary. The first word of every client header and of the server report datagram is
 * such a flags word; its top bits say which optional blocks follow.
 */
export const HeaderFlag = {
  /** Classic 24-byte header present; with no other bit it also asks for a connect-back test (-r / -d). */
  version1: 0x80000000,
  /** Extended header (type, length, option word, version, TOS, rate) follows the classic fields. */
  extend: 0x40000000,
  /** UDP-only test options are in use (reverse, no FIN exchange). */
  udpTests: 0x20000000,
  keyCheck: 0x10000000,
  /** UDP sequence numbers are 64 bits (low word at offset 0, high word at offset 12). */
  seqno64: 0x08000000,
  /** "Version 2" features in the option word: -R, --full-duplex, -X. */
  version2: 0x04000000,
  peerDetect: 0x02000000,
  bounceback: 0x00800000,
  smallTripTimes: 0x00020000,
  /** Bits 1..8 hold the header length times two. */
  lengthValid: 0x00010000,
  /** With version1: start the connect-back now (-d) rather than after the forward test (-r). */
  runNow: 0x00000001,
} as const;

/** Header length in bytes is `(flags & HEADER_LENGTH_MASK) >> 1` when `lengthValid` is set. */
export const HEADER_LENGTH_MASK = 0x000001fe;
export const MAX_HEADER_LENGTH = 256;

/** Upper 16 bits of the option word (header offset 32); the wire shows them shifted left by 16. */
export const OptionFlag = {
  isochronous: 0x0001,
  noUdpFin: 0x0008,
  tripTimes: 0x0010,
  unitsPps: 0x0080,
  bandwidthSet: 0x0100,
  fqRateSet: 0x0200,
  reverse: 0x0400,
  fullDuplex: 0x0800,
  epochStart: 0x1000,
  periodicBurst: 0x2000,
  writePrefetch: 0x4000,
  tcpQuickAck: 0x8000,
} as const;

/** Lower 16 bits of the option word (header offset 34): 2.2 blocks the header carries. */
export const LowerOptionFlag = {
  /** The congestion-control name field (offset 112: 16-bit length, then the name) is valid: -Z. */
  congestion: 0x8000,
  /** Offset 60 holds the client's barrier time in microseconds. */
  barrierTime: 0x4000,
  udpL4s: 0x2000,
} as const;

/**
 * 2.2 `--sync-transfer-id`: with this bit in numThreads, numThreads is 1 | transfer id (11 bits) << 20 | thread
 * count (20 bits). 2.2.1 also sets `version1` in the flags (which then asks for no connect-back); iperf 2's master
 * (2.2.n) does not.
 */
export const THREADS_HAVE_TRANSFER_ID = 0x80000000;
export const TRANSFER_ID_SHIFT = 20;
export const THREAD_COUNT_MASK = 0x000fffff;

/** Bits of the server report's flags word (report datagram offset 16). */
export const ReportFlag = {
  /** The report carries valid totals. */
  valid: 0x80000000,
  /** The latency/PPS extension (offsets 56..115) is valid; the client then prints the -e columns. */
  extend: 0x40000000,
  seqno64: 0x08000000,
} as const;

export function hasFlag(word: number, bit: number): boolean {
  return ((word & bit) >>> 0) !== 0;
}
