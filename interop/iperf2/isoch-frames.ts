import { z } from "zod";
import { NO_SAMPLES, type RunningStats, runningStatsAdd } from "../../src/formulas.ts";
import { type ClientHeader, UDP_HEADER_OFFSET } from "./client-header.ts";
import { u32 } from "./words.ts";

/**
 * iperf 2 UDP --isochronous frames as a receiver accounts them (docs/protocols/iperf2.md §3.6).
 *
 * Each datagram of an isochronous stream carries, right after the extended header (datagram offset 76 from 2.1.8,
 * 80 from 2.2, whose header is 4 bytes longer), big-endian: burst period (µs), the test's start (sec, µs), the
 * previous frame's id, this frame's id, the frame's size and the bytes of it still to come, this datagram included.
 * A frame is complete at the datagram whose `remaining` equals its own length. Both sides of a stream put them where
 * the client's own version does: a 2.1.8 client's frames sent to a 2.2.1 server are read 4 bytes off, and counted
 * by none.
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

/** 2.2's version word (major 2, minor 2 and on): its extended header has the barrier word too. */
const V22 = 0x00020002;

/**
 * Where the payload sits in a datagram of a client whose header is `h` (its version tells the layout), or undefined
 * when its header does not reach it.
 */
export function isochOffset(h: ClientHeader): number | undefined {
  const at = UDP_HEADER_OFFSET + 60 + ((h.ext?.version.high ?? 0) >= V22 ? 4 : 0);
  return UDP_HEADER_OFFSET + 60 + h.tail.length >= at + ISOCH_PAYLOAD ? at : undefined;
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

/**
 * What an --isochronous client asks the server to send it (-R), from the header's isochronous settings: four pairs
 * of big-endian words, whole part then millionths (frames/s, mean bit/s, deviation bit/s, gap between a frame's
 * datagrams in ms), at datagram offset 128 from 2.1.8 and 2.2.1 alike [wire: both clients' -u -R requests; the
 * announced length does not cover them, stock reads them anyway].
 */
export const UDP_ISOCH_SETTINGS_AT = 128;

export const IsochSettings = z.object({ perSecond: z.number(), meanBps: z.number(), stddevBps: z.number(), ipgMs: z.number() });
export type IsochSettings = z.infer<typeof IsochSettings>;

export function readIsochSettings(d: Uint8Array, at: number): IsochSettings | undefined {
  if (d.length < at + 32) return undefined;
  const pair = (o: number) => u32(d, at + o) + u32(d, at + o + 4) / 1e6;
  const s = { perSecond: pair(0), meanBps: pair(8), stddevBps: pair(16), ipgMs: pair(24) };
  // A frame rate or mean of 0 asks for no frames at all: not a request to honour (stock would divide by it).
  return s.perSecond > 0 && s.perSecond <= 100_000 && s.meanBps > 0 && s.ipgMs <= 1000 ? s : undefined;
}
