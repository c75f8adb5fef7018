import { NO_SAMPLES, type RunningStats, runningStatsAdd } from "../../src/formulas.ts";
import { type ClientHeader, UDP_HEADER_OFFSET } from "./client-header.ts";
import { u32 } from "./words.ts";

/**
 * iperf 2 UDP --isochronous frames as a receiver accounts them (docs/protocols/iperf2.md §3.6).
 *
 * Each datagram of an isochronous client carries, in the last 32 bytes of its announced header (datagram offset 76
 * from 2.1.8, 80 from 2.2.1, whose header is 4 bytes longer), big-endian: burst period (µs), the test's start
 * (sec, µs), the previous frame's id, this frame's id, the frame's size and the bytes of it still to come, this
 * datagram included. A frame is complete at the datagram whose `remaining` equals its own length.
 */
export const ISOCH_PAYLOAD = 32;

/** The shortest datagram of a 2.1.8 isochronous client: the datagram block and the header with its frame fields. */
export const ISOCH_DATAGRAM_MIN = UDP_HEADER_OFFSET + 60 + ISOCH_PAYLOAD;

export interface IsochPayload {
  periodUs: number;
  startSec: number;
  startUsec: number;
  prevFrameId: number;
  frameId: number;
  frameSize: number;
  remaining: number;
}

/** Where the payload sits in a datagram of a client whose header is `h`, or undefined when its header holds none. */
export function isochOffset(h: ClientHeader): number | undefined {
  return h.tail.length >= ISOCH_PAYLOAD ? UDP_HEADER_OFFSET + 60 + h.tail.length - ISOCH_PAYLOAD : undefined;
}

/** The payload at `at`, or undefined for a datagram too short to hold it (stock ignores such runts too). */
export function readIsochPayload(d: Uint8Array, at: number): IsochPayload | undefined {
  if (d.length < at + ISOCH_PAYLOAD) return undefined;
  return {
    periodUs: u32(d, at),
    startSec: u32(d, at + 4),
    startUsec: u32(d, at + 8),
    prevFrameId: u32(d, at + 12),
    frameId: u32(d, at + 16),
    frameSize: u32(d, at + 20),
    remaining: u32(d, at + 24),
  };
}

/** One report's frame columns: "Frame:rx/lost" and the frame latency (seconds). */
export interface FrameFigures {
  frames: number;
  lost: number;
  latency: RunningStats;
}

/**
 * A flow's frames, counted as stock's reporter counts them (reporter_handle_isoch_oneway_transit_udp, 2.1.8 and
 * 2.2.1), quirks included so the figures match a stock server's:
 *  - the first complete frame counts twice (the count starts at 1, then adds it): 2 s at 60 frames/s prints 121;
 *  - a complete frame following the last one by more than one id adds the whole difference to the lost count and
 *    gives no latency;
 *  - a frame's latency is the arrival of its last datagram minus its scheduled start (test start + period × (id − 1));
 *  - the latency columns are the whole flow's on every line (stock never resets them between reports), the counts
 *    are the window's.
 */
export class IsochFrames {
  private lastId = 0;
  private count = 0;
  private lostCount = 0;
  private latency: RunningStats = NO_SAMPLES;
  private mark = { count: 0, lost: 0 };

  /** One datagram of `length` bytes that arrived at `arrival` (wall clock, seconds). */
  add(p: IsochPayload, length: number, arrival: number): void {
    if (p.frameId === 0 || p.remaining !== length || p.frameId - p.prevFrameId !== 1) return;
    if (this.lastId === 0) this.count = 1;
    const delta = p.frameId - this.lastId;
    this.count++;
    if (delta === 1) {
      const scheduled = p.startSec + p.startUsec / 1e6 + (p.periodUs * (p.frameId - 1)) / 1e6;
      this.latency = runningStatsAdd(this.latency, arrival - scheduled);
    } else if (delta > 1) {
      this.lostCount += delta;
    }
    this.lastId = p.frameId;
  }

  /** Since the previous window (or the start). */
  window(): FrameFigures {
    const out = { frames: this.count - this.mark.count, lost: this.lostCount - this.mark.lost, latency: this.latency };
    this.mark = { count: this.count, lost: this.lostCount };
    return out;
  }

  /** The whole flow. */
  total(): FrameFigures {
    return { frames: this.count, lost: this.lostCount, latency: this.latency };
  }
}
