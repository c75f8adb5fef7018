import { Slot } from "../counters.ts";
import type { Frames } from "../stream-spec.ts";
import { nowMs } from "./context.ts";

/**
 * Isochronous sending (iperf 2's --isochronous): a frame every period, each frame's bytes sent back to back, as
 * datagrams of at most the stream's size (UDP) or writes of at most its write size (TCP). The schedule and the split
 * are iperf 2.1.8's (isochronous.cpp wait_tick, Client::RunUDPIsochronous, Client::RunTCP; docs/protocols/iperf2.md
 * §2.7, §3.6), so a stock receiver counts our frames as it counts its own client's.
 */

/** A frame's due time is met by spinning its last stretch: a timer fires a millisecond or more late. */
const SPIN_MS = 1.5;

/**
 * Runs `then` at `atMs`: a timer (handed to `timer`, so a stop can clear it) for most of the wait, a spin for its last
 * stretch. Always from a fresh turn of the loop, so frames due back to back neither nest calls nor hold off a stop
 * (`then` must check that its stream still runs).
 */
export function runAt(atMs: number, then: () => void, timer: (t: ReturnType<typeof setTimeout>) => void): void {
  const wait = atMs - nowMs();
  if (wait > SPIN_MS) {
    timer(setTimeout(() => runAt(atMs, then, timer), wait - SPIN_MS));
    return;
  }
  setImmediate(() => {
    while (nowMs() < atMs) {
      // at most SPIN_MS
    }
    then();
  });
}

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

/** The frame due next: its id, when, and its size. */
export interface DueFrame {
  id: number;
  atMs: number;
  size: number;
}

/**
 * A stream's frames: the clock, each frame's size, and the counters a frame moves (frames sent, slots missed,
 * slips). `lastFits` says which frame is the last of a timed test: UDP's whole period must fit in it (stock's
 * client checks the clock before each datagram), TCP's start (it checks once, before waiting for the slot).
 */
export class FrameSchedule {
  readonly clock: FrameClock;
  readonly periodUs: number;
  /** The wall clock (µs) at the first frame: the start a frame's fields carry. */
  readonly startUs: number;

  /** `wallUs`: the first frame's start, now or (a head written before the hand-off) a moment ago. */
  constructor(private readonly f: Frames, private readonly c: Float64Array, private readonly o: number, private readonly lastFits: "period" | "start", wallUs: number) {
    this.periodUs = Math.floor(1e6 / f.perSecond);
    this.clock = new FrameClock(Math.min(nowMs(), wallUs / 1000 - performance.timeOrigin), this.periodUs / 1000);
    this.startUs = wallUs;
  }

  /** The next frame, or undefined once a timed test has no whole frame left (the stream then waits for its stop). */
  next(): DueFrame | undefined {
    const slot = this.clock.next(nowMs());
    const { seconds } = this.f;
    const tail = this.lastFits === "period" ? this.clock.periodMs : 0;
    if (seconds !== undefined && slot.atMs - this.clock.startMs + tail > seconds * 1000 + 1e-3) return undefined;
    if (slot.skipped > 0) {
      this.c[this.o + Slot.framesMissed]! += slot.skipped;
      this.c[this.o + Slot.slips]!++;
    }
    return { id: slot.id, atMs: slot.atMs, size: frameBytes(this.f) };
  }

  sent(): void {
    this.c[this.o + Slot.frames]!++;
  }
}
