import { Frames, type StampedWrites } from "../stream-spec.ts";
import type { z } from "zod";
import { frameBytes } from "../worker/frames.ts";
import { WriteStamper } from "../worker/write-stamp.ts";
import { wallUs as wallClockUs } from "../worker/context.ts";

/**
 * At most this much of the first frame is written before the hand-off: more than a header, little enough that a
 * fresh socket takes it whole.
 */
const HEAD_BYTES = 4096;

/** What a frame sender's spec carries once its head is out: the head, and a preamble if the socket took only part. */
export interface FrameHead {
  frameHead: { bytes: number; frameSize: number; wallUs: number };
  preamble?: Uint8Array<ArrayBuffer>;
}

/**
 * Writes the first frame's first bytes at once, stamped as the stream would stamp them (frame 1, its size), through
 * `write` (the accepting thread's socket: bytes taken, or ≤ 0). A peer that times its first read from its request
 * (iperf 2.2.1 -R --isochronous: two frame periods, 33 ms at 60 frames/s) then never waits for the hand-off to a
 * Worker. Undefined when nothing was written: the stream then writes the whole frame itself.
 */
export function writeFrameHead(
  s: { payload: Uint8Array; frames: z.input<typeof Frames>; stampWrites?: StampedWrites },
  write: (bytes: Uint8Array) => number,
  wallUs: () => number = wallClockUs,
): FrameHead | undefined {
  const frameSize = frameBytes(Frames.parse(s.frames));
  const head = s.payload.slice(0, Math.min(frameSize, s.payload.byteLength, HEAD_BYTES));
  const at = wallUs();
  if (s.stampWrites) new WriteStamper(head, s.stampWrites, () => at).stamp({ id: 1, size: frameSize });
  const n = write(head);
  if (!(n > 0)) return undefined;
  // The rest of a head the socket did not take goes first from the Worker, as the connection's preamble.
  return { frameHead: { bytes: head.byteLength, frameSize, wallUs: at }, ...(n < head.byteLength ? { preamble: head.subarray(n) } : {}) };
}
