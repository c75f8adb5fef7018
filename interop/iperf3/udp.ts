/**
 * iperf3 UDP (docs/protocols/iperf3.md §6): the 4-byte stream handshake and the header at the front of every datagram.
 * Header: u32 seconds, u32 microseconds (sender clock; only differences matter), then the sequence number, u32 by
 * default or u64 with --udp-counters-64bit; all big-endian; the first datagram has sequence 1.
 */

/** ASCII "9876": what the client sends on each new UDP stream (host-order 987654321 on a little-endian 3.12). */
export const UDP_HELLO = Uint8Array.of(0x39, 0x38, 0x37, 0x36);
/** ASCII "6789": the server's reply. */
export const UDP_REPLY = Uint8Array.of(0x36, 0x37, 0x38, 0x39);
/** 3.12 clients also accept the legacy reply 987654321 written little-endian. */
const LEGACY_REPLY = Uint8Array.of(0xb1, 0x68, 0xde, 0x3a);

function same(a: Uint8Array, b: Uint8Array): boolean {
  return a.length >= 4 && a[0] === b[0] && a[1] === b[1] && a[2] === b[2] && a[3] === b[3];
}

/**
 * The reply a server sends to a hello datagram. The stock server accepts any first datagram; we answer the hello
 * and its byte-swapped twin (a big-endian 3.12 peer), and ignore anything else so a stray datagram opens no stream.
 */
export function replyToHello(datagram: Uint8Array): Uint8Array | undefined {
  if (datagram.length !== 4) return undefined;
  if (same(datagram, UDP_HELLO)) return UDP_REPLY;
  if (same(datagram, UDP_REPLY)) return UDP_HELLO;
  return undefined;
}

/** A big-endian 3.12 server replies with its host-order constant, which reads "9876" on the wire. */
export function isHelloReply(datagram: Uint8Array): boolean {
  return datagram.length === 4 && (same(datagram, UDP_REPLY) || same(datagram, LEGACY_REPLY) || same(datagram, UDP_HELLO));
}

export interface UdpHeader {
  sec: number;
  usec: number;
  /** Sequence number; bigint-free while below 2^53, which a test never reaches. */
  seq: number;
}

export function udpHeaderSize(counters64: boolean): number {
  return counters64 ? 16 : 12;
}

export function encodeUdpHeader(into: Uint8Array, h: UdpHeader, counters64: boolean): void {
  if (into.length < udpHeaderSize(counters64)) throw new RangeError("datagram shorter than the iperf3 header");
  const dv = new DataView(into.buffer, into.byteOffset, into.byteLength);
  dv.setUint32(0, h.sec >>> 0, false);
  dv.setUint32(4, h.usec >>> 0, false);
  if (counters64) dv.setBigUint64(8, BigInt(h.seq), false);
  else dv.setUint32(8, h.seq >>> 0, false);
}

/** Undefined when the datagram is too short to carry the header. */
export function decodeUdpHeader(datagram: Uint8Array, counters64: boolean): UdpHeader | undefined {
  if (datagram.length < udpHeaderSize(counters64)) return undefined;
  const dv = new DataView(datagram.buffer, datagram.byteOffset, datagram.byteLength);
  const seq = counters64 ? Number(dv.getBigUint64(8, false)) : dv.getUint32(8, false);
  return { sec: dv.getUint32(0, false), usec: dv.getUint32(4, false), seq };
}
