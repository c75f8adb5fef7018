import type { StampedWrites } from "../stream-spec.ts";

/**
 * Stamps a sender's payload buffer as each payload starts (StampedWrites): its wall clock, number and sequence, in
 * place, so the write that follows carries them. The buffer is the stream's one payload: one connection only.
 */
export class WriteStamper {
  private readonly view: DataView;
  private id = 0;
  private seq: number;

  constructor(buf: Uint8Array, private readonly at: StampedWrites, private readonly wallUs: () => number) {
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    this.seq = at.seqBase;
  }

  /** A payload starts: the next id, or with frames the frame's own id and size. */
  stamp(frame?: { id: number; size: number }): void {
    const us = Math.floor(this.wallUs());
    const v = this.view;
    this.id = frame ? frame.id : this.id + 1;
    this.seq += frame ? frame.size : v.byteLength;
    if (frame && this.at.sizeAt !== undefined) v.setUint32(this.at.sizeAt, frame.size >>> 0);
    v.setUint32(this.at.stampAt, Math.floor(us / 1e6) >>> 0);
    v.setUint32(this.at.stampAt + 4, us % 1e6);
    v.setUint32(this.at.idAt, this.id >>> 0);
    v.setUint32(this.at.seqAt, this.seq >>> 0);
    v.setUint32(this.at.seqAt + 4, Math.floor(this.seq / 2 ** 32));
  }
}
