import { UDP_HEADER_OFFSET } from "./client-header.ts";
import { Iperf2WireError } from "./wire-error.ts";
import { u32 } from "./words.ts";

/**
 * iperf 2 UDP datagram framing, for the Worker's "iperf2" datagram format and for the sessions here.
 *
 * Every datagram (both directions) starts with 16 bytes, big-endian:
 *   0 id (low 32 bits of the sequence number)   4 tv_sec   8 tv_usec   12 id2 (high 32 bits)
 * `tv_sec/tv_usec` is the sender's WALL CLOCK (Unix epoch) at send time: the receiver's jitter and the -e latency
 * figures compare it with its own wall clock, so a monotonic clock here would print nonsense one-way latencies.
 *
 * Rules for a sender (the worker, format "iperf2"):
 *  - Start from the template the glue passes as payload (`udpTemplate`): client-to-server datagrams carry the client
 *    header at offset 16 in EVERY datagram (stock servers read it from whichever datagram arrives first), server-to-
 *    client datagrams (-R) carry payload only. Overwrite bytes 0..15 only, with `stampIperf2(buf, seq, sec, usec)`.
 *  - The first datagram has seq 1; each datagram adds 1. Never send seq 0 or reuse a number.
 *  - End ("iperf2-fin"): send the same template with seq = `finSeq(lastSeq)` = -(lastSeq + 1), stamped like data.
 *    The server answers with a report datagram (see server-report.ts); until any datagram comes back, resend a FIN
 *    every 10 ms for up to 2 s, each time with seq one lower than the previous FIN (as stock 2.1.8 does). Hand the
 *    first datagram that comes back, unparsed, to the main thread; then stop. A receiver-side -R FIN is sent once
 *    (stock servers do not expect an answer to it).
 *
 * Rules for a receiver (format "iperf2"):
 *  - Datagrams shorter than 16 bytes are not iperf 2 traffic: count them as errors, never index past their end.
 *  - `readIperf2(buf).seq` < 0 is the FIN: the sender's last data datagram had seq -seq - 1.
 *  - Feed `UdpReceiverStats` (udp-receiver-stats.ts) with seq, the sent time, the arrival wall clock and the full
 *    datagram length; its totals are exactly what the server report carries.
 */

export const IPERF2_DATAGRAM_HEADER = 16;

/**
 * Where a --trip-times client puts its start (sec, usec): offset 112 from 2.1.8 and 2.2.1 alike (2.2.1's header is
 * 4 bytes longer, its start block 4 shorter) [wire: tests/fixtures/iperf2/isoch-udp-datagrams.txt]. A stock server
 * ignores --trip-times without it, and counts the flow's time from it.
 */
export const UDP_TRIP_START_AT = 112;
const TWO_32 = 4294967296;

/** Wall-clock seconds as the timeval iperf 2 carries on the wire: whole seconds, then microseconds. */
export function timeval(seconds: number): { sec: number; usec: number } {
  const sec = Math.floor(seconds);
  return { sec, usec: Math.min(999_999, Math.round((seconds - sec) * 1e6)) };
}

/** Writes the 16-byte block at the start of `buf`; `seq` may be negative (FIN), it is sent as 64-bit two's complement. */
export function stampIperf2(buf: Uint8Array, seq: number, sec: number, usec: number): void {
  const high = Math.floor(seq / TWO_32);
  const low = seq - high * TWO_32;
  const view = new DataView(buf.buffer, buf.byteOffset, IPERF2_DATAGRAM_HEADER);
  view.setUint32(0, low >>> 0);
  view.setUint32(4, sec >>> 0);
  view.setUint32(8, usec >>> 0);
  view.setUint32(12, high >>> 0);
}

export interface Iperf2Stamp {
  /** Signed sequence number; negative = FIN. */
  seq: number;
  sec: number;
  usec: number;
}

/**
 * Reads the 16-byte block. 2.1.8 sends 64-bit sequence numbers (header flag seqno64); an older client sends only a
 * signed 32-bit id and leaves id2 alone, so a receiver that saw no seqno64 flag passes `seq64 = false`.
 */
export function readIperf2(buf: Uint8Array, seq64 = true): Iperf2Stamp {
  if (buf.length < IPERF2_DATAGRAM_HEADER) {
    throw new Iperf2WireError("short", `iperf 2 datagram needs ${IPERF2_DATAGRAM_HEADER} bytes, got ${buf.length}`);
  }
  const low = u32(buf, 0);
  const seq = seq64 ? (u32(buf, 12) | 0) * TWO_32 + low : low | 0;
  return { seq, sec: u32(buf, 4), usec: u32(buf, 8) };
}

/** The FIN's sequence number after data datagrams 1..lastSeq. */
export function finSeq(lastSeq: number): number {
  return -(lastSeq + 1);
}

/**
 * A datagram of `size` bytes (at least 16) with `clientHeader` at offset 16 when it fits, zeros elsewhere. Zeros, not
 * a fill pattern: a stock server parses offset 16 as header flags, and bytes with the top bits set there start tests
 * nobody asked for (docs/protocols/iperf2.md §3.5).
 */
export function udpTemplate(size: number, clientHeader: Uint8Array | null): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(Math.max(size, IPERF2_DATAGRAM_HEADER));
  if (clientHeader && UDP_HEADER_OFFSET + clientHeader.length <= out.length) out.set(clientHeader, UDP_HEADER_OFFSET);
  return out;
}

/** Server-to-client payload (-R, -d back-connections): ASCII digits like the stock server, after the 16-byte block. */
export function digitsPayload(size: number, offset = 0): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(size);
  for (let k = 0; k < size; k++) out[k] = 0x30 + ((k + offset) % 10);
  return out;
}
