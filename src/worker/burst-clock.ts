import type { StampedBursts } from "../stream-spec.ts";

/**
 * Follows a byte stream cut into stamped bursts (StampedBursts) across reads of any size: each burst whose last
 * byte arrives is timed from its stamp. Nothing is allocated per read; the size from the wire only counts bytes.
 * A header whose size is shorter than the header itself, or whose microseconds are not below 10⁶, is not the framing
 * announced: timing stops there and the bytes are still counted by the receiver.
 */
export class BurstClock {
  private readonly head: Uint8Array;
  private readonly view: DataView;
  private have = 0;
  /** Bytes of the current burst still to come after its header. */
  private left = 0;
  private stampUs = 0;
  private broken = false;

  constructor(
    private readonly framing: Omit<StampedBursts, "lead">,
    private readonly timed: (us: number) => void,
  ) {
    this.head = new Uint8Array(framing.headerBytes);
    this.view = new DataView(this.head.buffer);
  }

  /** `d` arrived at `nowUs` (the sender's wall clock, in µs since the epoch). */
  feed(d: Uint8Array, nowUs: number): void {
    let i = 0;
    while (i < d.length && !this.broken) {
      if (this.left > 0) {
        const n = Math.min(this.left, d.length - i);
        this.left -= n;
        i += n;
        if (this.left === 0) this.timed(nowUs - this.stampUs);
        continue;
      }
      const n = Math.min(this.head.length - this.have, d.length - i);
      this.head.set(d.subarray(i, i + n), this.have);
      this.have += n;
      i += n;
      if (this.have === this.head.length) this.opened(nowUs);
    }
  }

  private opened(nowUs: number): void {
    const { sizeAt, stampAt, headerBytes } = this.framing;
    this.have = 0;
    const size = this.view.getUint32(sizeAt);
    const usec = this.view.getUint32(stampAt + 4);
    if (size < headerBytes || usec >= 1e6) {
      this.broken = true;
      return;
    }
    this.stampUs = this.view.getUint32(stampAt) * 1e6 + usec;
    this.left = size - headerBytes;
    if (this.left === 0) this.timed(nowUs - this.stampUs);
  }
}
