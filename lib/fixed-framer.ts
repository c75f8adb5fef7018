/**
 * Reassembles messages of one fixed size from a byte stream however it is split (netperf's 656-byte control
 * messages, ntttcp's 4-byte sync integers). It holds at most one partial message, so a peer that streams garbage
 * costs `size` bytes of memory, never more.
 */
export class FixedFramer {
  private partial: Uint8Array;
  private filled = 0;

  constructor(readonly size: number) {
    this.partial = new Uint8Array(size);
  }

  /** Bytes of an incomplete message held so far. */
  get pending(): number {
    return this.filled;
  }

  /** The messages `chunk` completes, each in its own array. */
  push(chunk: Uint8Array): Uint8Array[] {
    const out: Uint8Array[] = [];
    let at = 0;
    while (at < chunk.length) {
      const take = Math.min(this.size - this.filled, chunk.length - at);
      this.partial.set(chunk.subarray(at, at + take), this.filled);
      this.filled += take;
      at += take;
      if (this.filled === this.size) {
        out.push(this.partial);
        this.partial = new Uint8Array(this.size);
        this.filled = 0;
      }
    }
    return out;
  }
}
