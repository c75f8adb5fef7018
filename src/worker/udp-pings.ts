/**
 * Timestamped UDP pings (a latency probe's UDP half): each datagram carries its sequence number and its send time,
 * the server echoes it, and the reply's own stamp says how long it took. Sent on a clock, not one at a time, so a
 * lost ping costs one sample, not the loop's pace, and replies are matched by their stamp, never by their order.
 */

/** The stamp: u32 sequence, 4 bytes spare, f64 send time (ms on the sender's clock); a ping is at least this long. */
export const PING_BYTES = 16;

export function writePing(buf: Uint8Array, seq: number, sentMs: number): void {
  const v = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  v.setUint32(0, seq >>> 0);
  v.setFloat64(8, sentMs);
}

/** The echoed stamp; undefined for a datagram too short to hold one. */
export function readPing(d: Uint8Array): { seq: number; sentMs: number } | undefined {
  if (d.byteLength < PING_BYTES) return undefined;
  const v = new DataView(d.buffer, d.byteOffset, d.byteLength);
  return { seq: v.getUint32(0), sentMs: v.getFloat64(8) };
}

/** The pings awaiting their reply, oldest first; a ping unanswered after `lossMs` is lost (a late reply is ignored). */
export class PingBook {
  private readonly pending = new Map<number, number>();

  constructor(private readonly lossMs: number) {}

  sent(seq: number, atMs: number): void {
    this.pending.set(seq, atMs);
  }

  /** The reply's send time when it answers a ping still awaited (once: a duplicate is not a second sample). */
  answered(seq: number, sentMs: number): number | undefined {
    if (this.pending.get(seq) !== sentMs) return undefined;
    this.pending.delete(seq);
    return sentMs;
  }

  /** Forgets the pings sent more than `lossMs` before `nowMs`; returns how many. */
  expire(nowMs: number): number {
    let lost = 0;
    for (const [seq, at] of this.pending) {
      if (nowMs - at < this.lossMs) break;
      this.pending.delete(seq);
      lost++;
    }
    return lost;
  }
}
