/**
 * The 92-byte header a --trip-times client opens each TCP write (burst) with (docs/protocols/iperf2.md §2.7), as
 * the engine's StampedBursts framing reads it: the burst's whole size at 48, the client's write time (wall clock,
 * seconds then microseconds, big-endian) at 20.
 */
export const TCP_BURST_HEADER = { headerBytes: 92, sizeAt: 48, stampAt: 20 } as const;

/**
 * What the sender stamps into each burst as it goes (the engine's StampedWrites): the write time at 20, the burst id
 * from 1 at 44, and at 52 the sequence, which a 2.1.8 client starts at 2 and advances by each burst's size (captured:
 * 302, 602, ... for -l 300).
 */
export const TCP_BURST_STAMPS = { stampAt: 20, idAt: 44, seqAt: 52, seqBase: 2 } as const;

const START_AT = 12;
/** An --isochronous client's frame period (µs) at 40 [wire: 2.1.8, 0x411a = 16666 at 60 frames/s]. */
const PERIOD_AT = 40;

/**
 * The payload a --trip-times client writes again and again, before each write's stamps: stock builds each burst
 * header in the buffer its client header was in, so the header's bytes show through where the burst header has no
 * field; then the test's start time at 12, the frame period at 40 (--isochronous), the burst size at 48, and `fill`
 * after the 92 header bytes.
 */
export function tcpBurstTemplate(clientHeader: Uint8Array, fill: Uint8Array, start: { sec: number; usec: number }, periodUs = 0): Uint8Array<ArrayBuffer> {
  if (fill.byteLength < TCP_BURST_HEADER.headerBytes) throw new RangeError(`a --trip-times burst holds its ${TCP_BURST_HEADER.headerBytes}-byte header: -l must be ${TCP_BURST_HEADER.headerBytes} or more`);
  const out = new Uint8Array(fill.byteLength);
  out.set(fill);
  out.fill(0, 0, TCP_BURST_HEADER.headerBytes);
  out.set(clientHeader.subarray(0, TCP_BURST_HEADER.headerBytes));
  const v = new DataView(out.buffer);
  v.setUint32(START_AT, start.sec >>> 0);
  v.setUint32(START_AT + 4, start.usec >>> 0);
  v.setUint32(TCP_BURST_HEADER.sizeAt, out.byteLength);
  if (periodUs > 0) v.setUint32(PERIOD_AT, periodUs >>> 0);
  return out;
}
