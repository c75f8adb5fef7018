/**
 * Isochronous UDP sending (iperf 2's --isochronous): a frame every period, each frame's bytes sent back to back as
 * datagrams of at most the stream's size. The schedule and the split are iperf 2.1.8's (isochronous.cpp wait_tick,
 * Client::RunUDPIsochronous; docs/protocols/iperf2.md §3.6), so a stock receiver counts our frames as it counts its
 * own client's.
 */

/** One datagram of a frame: its length, the frame's bytes still to send counting it, and the frame size it carries. */
export interface FramePart {
  length: number;
  remaining: number;
  frameSize: number;
}

/**
 * A frame of `size` bytes as datagrams of at most `datagramSize`. Where what is left would be shorter than the
 * smallest datagram (the header), the rest is sent as one smallest datagram and the frame size it carries becomes
 * that, as stock does.
 */
export function frameParts(size: number, datagramSize: number, minBytes: number): FramePart[] {
  const out: FramePart[] = [];
  let left = Math.max(size, minBytes);
  let frameSize = left;
  while (left > 0) {
    const length = Math.min(left, datagramSize);
    out.push({ length, remaining: left, frameSize });
    left -= length;
    if (left > 0 && left < minBytes) frameSize = left = minBytes;
  }
  return out;
}

/** A normal sample (Box-Muller) from `random` (uniform in [0, 1)). */
function normal(mu: number, sigma: number, random: () => number): number {
  const u = 1 - random();
  return mu + sigma * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
}

/**
 * A frame's size in bytes: the mean bit rate over the frame rate, drawn from a log-normal with the given standard
 * deviation (bits/s) as stock's lognormal(), exact without one; at least `minBytes`.
 */
export function frameBytes(o: { perSecond: number; meanBps: number; stddevBps: number; minBytes: number }, random = Math.random): number {
  const { meanBps: mu, stddevBps: sigma } = o;
  let bits = mu;
  if (sigma > 0) {
    const phi = Math.sqrt(mu * mu + sigma * sigma);
    bits = Math.exp(normal(Math.log((mu * mu) / phi), Math.sqrt(Math.log((phi * phi) / (mu * mu))), random));
  }
  return Math.max(o.minBytes, Math.floor(Math.floor(bits) / (o.perSecond * 8)));
}

/**
 * Frame slots: slot 1 at the start, slot k at start + (k − 1) × period. After a frame the next one goes at the first
 * slot not yet begun; a slot passed while a frame was late is skipped (its id is never sent: the receiver counts it
 * missed, and the skip is a slip).
 */
export class FrameClock {
  private slot = 0;

  constructor(readonly startMs: number, readonly periodMs: number) {}

  /** The next frame: its id and when it is due (ms, the clock `startMs` is on). */
  next(nowMs: number): { id: number; atMs: number; skipped: number } {
    if (this.slot === 0) {
      this.slot = 1;
      return { id: 1, atMs: this.startMs, skipped: 0 };
    }
    const last = this.slot;
    let k = last + 1;
    while (this.startMs + (k - 1) * this.periodMs <= nowMs) k++;
    this.slot = k;
    return { id: k, atMs: this.startMs + (k - 1) * this.periodMs, skipped: k - last - 1 };
  }
}
