/**
 * Token buckets that pace a sender to a bit rate, a packet rate, or both (both limits apply at once).
 *
 * A sender loop asks `allowance(now, size)` for how many bytes it may send now as writes or datagrams of `size`
 * bytes, sends, reports what went out with `consume(bytes, packets)`, and when the allowance is 0 sleeps for
 * `waitMs(now, size)`. Without any rate every call says "go" (Infinity, 0 ms).
 *
 * The byte bucket may go into debt: a datagram larger than the whole bucket is let through once the bucket is
 * full, and the debt is paid by waiting. So a burst smaller than one datagram never stalls a sender, and the
 * average is exact whatever the datagram size. The packet bucket is strict (a whole token per packet).
 *
 * Bookkeeping is drift-free: a bucket keeps the instant it was last full (`base`) and the exact sum spent since,
 * so credit = burst + rate·(now − base) − spent is recomputed from sums, never accumulated step by step.
 * `base` moves only when the bucket is full again (the sender idled), which is where token-bucket credit is lost
 * by design.
 */

export interface PacerOptions {
  /** Payload bits per second; 0 or absent = no byte limit. */
  bitsPerSecond?: number;
  /** Packets (datagrams, or writes for TCP) per second; 0 or absent = no packet limit. */
  packetsPerSecond?: number;
  /** Byte bucket size; default DEFAULT_BURST_MS worth of the bit rate (at least 1 byte). */
  burstBytes?: number;
  /** Packet bucket size; default DEFAULT_BURST_MS worth of the packet rate (at least 1 packet). */
  burstPackets?: number;
  /**
   * Credit at the start instead of a full bucket, so a sender's first interval is not one burst over its rate.
   * Senders give one write or datagram: the peers send their first unit at once, then pace.
   */
  initialBytes?: number;
  initialPackets?: number;
}

/**
 * Default bucket depth in time. Timers in a Worker fire a millisecond or more late; a bucket shallower than that
 * would overflow while the sender sleeps and the rate would fall short of the target.
 */
export const DEFAULT_BURST_MS = 10;

/** Added to every wait so that rounding never wakes the caller one ulp short of the next token. */
const WAKE_MARGIN_MS = 1e-6;

function checkRate(name: string, v: number | undefined): number {
  if (v === undefined) return 0;
  if (!Number.isFinite(v) || v < 0) throw new RangeError(`pacer: ${name} must be a finite number >= 0, got ${v}`);
  return v;
}

function checkBurst(name: string, v: number | undefined, fallback: number): number {
  if (v === undefined) return Math.max(1, fallback);
  if (!Number.isFinite(v) || v < 1) throw new RangeError(`pacer: ${name} must be a finite number >= 1, got ${v}`);
  return v;
}

export class Pacer {
  /** True when neither rate is set: allowance is Infinity and waitMs 0. */
  readonly unlimited: boolean;
  // Rates are per millisecond, the unit of the clock.
  private readonly byteRate: number;
  private readonly byteCap: number;
  private byteBase: number;
  private byteSpent = 0;
  private readonly pktRate: number;
  private readonly pktCap: number;
  private pktBase: number;
  private pktSpent = 0;
  private lastMs: number;

  constructor(options: PacerOptions = {}, private readonly clock: () => number = () => performance.now()) {
    const bps = checkRate("bitsPerSecond", options.bitsPerSecond);
    const pps = checkRate("packetsPerSecond", options.packetsPerSecond);
    this.byteRate = bps / 8 / 1000;
    this.pktRate = pps / 1000;
    this.byteCap = checkBurst("burstBytes", options.burstBytes, this.byteRate * DEFAULT_BURST_MS);
    this.pktCap = checkBurst("burstPackets", options.burstPackets, this.pktRate * DEFAULT_BURST_MS);
    this.unlimited = this.byteRate === 0 && this.pktRate === 0;
    // Both buckets start full: the first burst may go at once.
    this.lastMs = clock();
    this.byteBase = this.lastMs;
    this.pktBase = this.lastMs;
    if (options.initialBytes !== undefined) this.byteSpent = Math.max(0, this.byteCap - options.initialBytes);
    if (options.initialPackets !== undefined) this.pktSpent = Math.max(0, this.pktCap - options.initialPackets);
  }

  /** Moves the clock forward; a bucket that has filled up again restarts its sums from now. */
  private refill(nowMs: number): void {
    // A clock that steps back (a caller passing stale times) must not take credit away retroactively.
    if (nowMs > this.lastMs) this.lastMs = nowMs;
    const now = this.lastMs;
    if (this.byteRate * (now - this.byteBase) >= this.byteSpent) {
      this.byteBase = now;
      this.byteSpent = 0;
    }
    if (this.pktRate * (now - this.pktBase) >= this.pktSpent) {
      this.pktBase = now;
      this.pktSpent = 0;
    }
  }

  /** Byte credit at the last refill; negative while a debt is being paid. */
  private byteTokens(): number {
    return this.byteCap + this.byteRate * (this.lastMs - this.byteBase) - this.byteSpent;
  }

  private pktTokens(): number {
    return this.pktCap + this.pktRate * (this.lastMs - this.pktBase) - this.pktSpent;
  }

  /**
   * Credit needed before a send of `packetBytes` is worth making: the whole packet, or the whole bucket when the
   * packet is bigger. Without it a TCP sender polling every few µs would be let through with a few bytes a time.
   */
  private quantum(packetBytes: number): number {
    return Math.min(Math.max(1, packetBytes), this.byteCap);
  }

  /**
   * Bytes that may be sent now as writes/datagrams of `packetBytes` each (Infinity without limits; 0 = wait).
   * With a bit rate it is the byte credit rounded down, once that covers one packet (or a full bucket, for packets
   * larger than the bucket: then a datagram sender sends one whole datagram whenever this is > 0 and the bucket
   * goes into debt). With a packet rate it is at most whole packet tokens × packetBytes.
   */
  allowance(nowMs: number = this.clock(), packetBytes = 1): number {
    if (this.unlimited) return Infinity;
    this.refill(nowMs);
    let bytes = Infinity;
    if (this.byteRate > 0) {
      const t = this.byteTokens();
      bytes = t >= this.quantum(packetBytes) ? Math.floor(t) : 0;
    }
    if (this.pktRate > 0) {
      const t = this.pktTokens();
      const packets = t >= 1 ? Math.floor(t) : 0;
      bytes = Math.min(bytes, packets * Math.max(1, packetBytes));
    }
    return bytes;
  }

  /**
   * Records what was sent, as of the time of the last allowance()/waitMs() call (call one of them right before
   * sending, as a sender loop does anyway). No clock read here: this sits in the send loop.
   */
  consume(bytes: number, packets = 1): void {
    this.byteSpent += bytes;
    this.pktSpent += packets;
  }

  /** Milliseconds until allowance(·, packetBytes) is non-zero again; 0 when it already is (or there is no limit). */
  waitMs(nowMs: number = this.clock(), packetBytes = 1): number {
    if (this.unlimited) return 0;
    this.refill(nowMs);
    let wait = 0;
    if (this.byteRate > 0) {
      const short = this.quantum(packetBytes) - this.byteTokens();
      if (short > 0) wait = short / this.byteRate;
    }
    if (this.pktRate > 0) {
      const short = 1 - this.pktTokens();
      if (short > 0) wait = Math.max(wait, short / this.pktRate);
    }
    return wait > 0 ? wait + WAKE_MARGIN_MS : 0;
  }
}
