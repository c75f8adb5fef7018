/**
 * Frames on the native control connection: 2 magic bytes "AP", a 4-byte big-endian length, then that many bytes of
 * UTF-8 JSON. The magic makes a non-anyperf peer fail on its first byte instead of at a deadline (stock iperf3 -s
 * answers our hello with one state byte, 0x09). The length is checked against MAX_FRAME before anything is allocated.
 */
import { concatBytes } from "../../../lib/bytes.ts";

export const MAGIC = Uint8Array.of(0x41, 0x50);
const HEADER = MAGIC.length + 4;
/** Largest JSON a peer may send: a results document of 20,000 streams (10,000 each way) fits with room to spare. */
export const MAX_FRAME = 16 << 20;

/** Bytes that are not our protocol; `message` is one line, safe to print. */
export class NativeProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "NativeProtocolError";
  }
}

export function encodeFrame(value: unknown): Uint8Array {
  const body = new TextEncoder().encode(JSON.stringify(value));
  if (body.length > MAX_FRAME) throw new NativeProtocolError(`message of ${body.length} bytes exceeds the ${MAX_FRAME}-byte frame limit`);
  const out = new Uint8Array(HEADER + body.length);
  out.set(MAGIC, 0);
  new DataView(out.buffer).setUint32(MAGIC.length, body.length, false);
  out.set(body, HEADER);
  return out;
}

/**
 * A push parser: feed any chunking, get each frame's parsed JSON (not yet checked against a schema). The frames
 * before a bad one come out with the error, so the outcome does not depend on how the bytes were cut; after an
 * error the decoder yields nothing more.
 */
export class FrameDecoder {
  private parts: Uint8Array[] = [];
  private buffered = 0;
  private failed = false;

  push(chunk: Uint8Array): { frames: unknown[]; error?: NativeProtocolError } {
    const frames: unknown[] = [];
    if (this.failed) return { frames };
    this.parts.push(chunk.slice());
    this.buffered += chunk.length;
    try {
      for (;;) {
        const frame = this.next();
        if (frame === undefined) return { frames };
        frames.push(frame);
      }
    } catch (e) {
      this.failed = true;
      this.parts = [];
      return { frames, error: e instanceof NativeProtocolError ? e : new NativeProtocolError(String(e)) };
    }
  }

  /** Bytes received but not yet part of a whole frame. */
  get pending(): number {
    return this.buffered;
  }

  /** The first n buffered bytes; parts are joined only when the first is too short (no copy per chunk of a big frame). */
  private peek(n: number): Uint8Array {
    if (this.parts[0]!.length < n) this.parts = [concatBytes(this.parts)];
    return this.parts[0]!.subarray(0, n);
  }

  private next(): unknown {
    if (this.buffered === 0) return undefined;
    const head = this.peek(Math.min(HEADER, this.buffered));
    for (let i = 0; i < Math.min(head.length, MAGIC.length); i++) {
      if (head[i] !== MAGIC[i]) throw new NativeProtocolError(`not the anyperf protocol (byte ${i} of a frame is ${hex(head[i]!)}, not ${hex(MAGIC[i]!)})`);
    }
    if (head.length < HEADER) return undefined;
    const length = new DataView(head.buffer, head.byteOffset, HEADER).getUint32(MAGIC.length, false);
    if (length > MAX_FRAME) throw new NativeProtocolError(`frame of ${length} bytes exceeds the ${MAX_FRAME}-byte limit`);
    if (this.buffered < HEADER + length) return undefined;
    const all = this.peek(HEADER + length);
    const body = all.subarray(HEADER, HEADER + length);
    const rest = this.parts[0]!.subarray(HEADER + length);
    this.parts = rest.length ? [rest, ...this.parts.slice(1)] : this.parts.slice(1);
    this.buffered -= HEADER + length;
    let text: string;
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(body);
      return JSON.parse(text);
    } catch {
      throw new NativeProtocolError(`frame of ${length} bytes is not UTF-8 JSON`);
    }
  }
}

function hex(b: number): string {
  return `0x${b.toString(16).padStart(2, "0")}`;
}
