import { MESSAGE_SIZE } from "./words.ts";

/**
 * Reassembles 656-byte control messages from arbitrary chunks. The buffer never holds more than one partial
 * message, so a peer that streams garbage costs at most 656 bytes of memory.
 */
export class FrameReader {
  private partial = new Uint8Array(MESSAGE_SIZE);
  private filled = 0;

  /** Bytes of an incomplete message held so far. */
  get pending(): number {
    return this.filled;
  }

  push(chunk: Uint8Array): Uint8Array[] {
    const out: Uint8Array[] = [];
    let at = 0;
    while (at < chunk.length) {
      const take = Math.min(MESSAGE_SIZE - this.filled, chunk.length - at);
      this.partial.set(chunk.subarray(at, at + take), this.filled);
      this.filled += take;
      at += take;
      if (this.filled === MESSAGE_SIZE) {
        out.push(this.partial);
        this.partial = new Uint8Array(MESSAGE_SIZE);
        this.filled = 0;
      }
    }
    return out;
  }
}
