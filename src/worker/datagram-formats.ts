import type { DatagramFormat } from "../stream-spec.ts";

/**
 * Where each wire format keeps the sequence number and send time of a datagram. The layouts are the peers'
 * (docs/protocols/iperf3.md §6.2, docs/protocols/iperf2.md §3.1); the worker only needs these three operations, so they
 * live with it. Sequence numbers start at 1; a negative sequence marks a FIN (anyperf, iperf 2).
 */
export interface DatagramCodec {
  readonly headerBytes: number;
  stamp(v: DataView, seq: number, timeUs: number): void;
  /** NaN when the datagram is too short to carry a sequence number. */
  seq(v: DataView): number;
  sentUs(v: DataView): number;
}

const TWO32 = 4294967296;

const none: DatagramCodec = {
  headerBytes: 0,
  stamp() {},
  seq: () => NaN,
  sentUs: () => NaN,
};

const anyperf: DatagramCodec = {
  headerBytes: 16,
  stamp(v, seq, timeUs) {
    v.setInt32(0, Math.floor(seq / TWO32));
    v.setUint32(4, seq >>> 0);
    v.setFloat64(8, timeUs);
  },
  seq: (v) => (v.byteLength < 16 ? NaN : v.getInt32(0) * TWO32 + v.getUint32(4)),
  sentUs: (v) => v.getFloat64(8),
};

function iperf3(seqBytes: 4 | 8): DatagramCodec {
  return {
    headerBytes: 8 + seqBytes,
    stamp(v, seq, timeUs) {
      v.setUint32(0, Math.floor(timeUs / 1e6) >>> 0);
      v.setUint32(4, Math.floor(timeUs % 1e6));
      if (seqBytes === 4) v.setUint32(8, seq >>> 0);
      else {
        v.setUint32(8, Math.floor(seq / TWO32));
        v.setUint32(12, seq >>> 0);
      }
    },
    seq: (v) =>
      v.byteLength < 8 + seqBytes ? NaN : seqBytes === 4 ? v.getUint32(8) : v.getUint32(8) * TWO32 + v.getUint32(12),
    sentUs: (v) => v.getUint32(0) * 1e6 + v.getUint32(4),
  };
}

/** iperf 2: id (low 32 bits, signed) at 0, tv_sec at 4, tv_usec at 8, id2 (high 32 bits) at 12. */
const iperf2: DatagramCodec = {
  headerBytes: 16,
  stamp(v, seq, timeUs) {
    const hi = Math.floor(seq / TWO32);
    v.setUint32(0, (seq - hi * TWO32) >>> 0);
    v.setUint32(4, Math.floor(timeUs / 1e6) >>> 0);
    v.setUint32(8, Math.floor(timeUs % 1e6));
    v.setInt32(12, hi);
  },
  seq: (v) => (v.byteLength < 16 ? NaN : v.getInt32(12) * TWO32 + v.getUint32(0)),
  sentUs: (v) => v.getUint32(4) * 1e6 + v.getUint32(8),
};

export const datagramCodecs: Record<DatagramFormat, DatagramCodec> = {
  none,
  anyperf,
  iperf3: iperf3(4),
  "iperf3-64": iperf3(8),
  iperf2,
};

/** The iperf 2 frame fields an isochronous sender writes into each datagram at `at` (docs/protocols/iperf2.md §3.6). */
export interface Iperf2FrameFields {
  periodUs: number;
  startUs: number;
  prevId: number;
  id: number;
  frameSize: number;
  remaining: number;
}

export function stampIperf2Frame(v: DataView, at: number, f: Iperf2FrameFields): void {
  v.setUint32(at, f.periodUs >>> 0);
  v.setUint32(at + 4, Math.floor(f.startUs / 1e6) >>> 0);
  v.setUint32(at + 8, Math.floor(f.startUs % 1e6));
  v.setUint32(at + 12, f.prevId >>> 0);
  v.setUint32(at + 16, f.id >>> 0);
  v.setUint32(at + 20, f.frameSize >>> 0);
  v.setUint32(at + 24, f.remaining >>> 0);
}
