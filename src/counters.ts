/**
 * Live counters shared between the Workers (writers) and the main thread (reader) through one SharedArrayBuffer.
 * Workers only ever add to cumulative totals; every window (warm-up, measured, interval) is the difference of two
 * snapshots, so the workers need not know about phases and sampling never sends a message.
 */

export const Slot = {
  bytes: 0, // payload bytes moved (sent by a sender, received by a receiver)
  packets: 1, // datagrams, or write()/read() callbacks for TCP
  transactions: 2,
  lost: 3, // datagrams missing from the sequence (net of late arrivals)
  outOfOrder: 4,
  /** RFC 1889 running jitter in seconds: a level, not a total, so windows take the last value. */
  jitter: 5,
  sendErrors: 6,
  latencySumUs: 7,
  connections: 8, // sockets opened or accepted so far
  closed: 9, // sockets closed so far
  /** Last time (ms, performance.timeOrigin based, worker clock) a byte moved; idle detection. */
  lastActivityMs: 10,
  latencyMinUs: 11, // level
  latencyMaxUs: 12, // level
  maxSeq: 13, // level
  duplicates: 14,
  /** Bytes a sending stream read back on the same socket (full duplex: tcp-send with countReceived). */
  received: 15,
  /** From TCP_INFO of the stream's open sockets, sampled once a second by the Worker (Linux, Bun): levels... */
  tcpRttUs: 16, // mean smoothed RTT
  tcpCwnd: 17, // sum of congestion windows, segments
  /** ...and a counter: segments retransmitted, summed over every socket the stream ever had. */
  tcpRetrans: 18,
} as const;
export const SLOTS_PER_STREAM = 24;

/** Latency histogram: log-linear buckets over microseconds; layout in src/histogram.ts. */
export const HIST_BUCKETS = 2048;

export interface CounterBuffers {
  counters: SharedArrayBuffer;
  histograms: SharedArrayBuffer;
}

export function allocCounters(streams: number): CounterBuffers {
  return {
    counters: new SharedArrayBuffer(streams * SLOTS_PER_STREAM * 8),
    histograms: new SharedArrayBuffer(streams * HIST_BUCKETS * 4),
  };
}

export interface StreamCounters {
  bytes: number;
  packets: number;
  transactions: number;
  lost: number;
  outOfOrder: number;
  jitter: number;
  sendErrors: number;
  latencySumUs: number;
  connections: number;
  closed: number;
  latencyMinUs: number;
  latencyMaxUs: number;
  maxSeq: number;
  duplicates: number;
  /** Bytes read by a sending stream that also counts what it receives (tcp-send countReceived). */
  received: number;
  tcpRttUs: number;
  tcpCwnd: number;
  tcpRetrans: number;
  /** Per-bucket transaction counts (see src/histogram.ts). */
  histogram: Uint32Array;
}

/** A copy of every stream's counters at one instant. */
export interface Snapshot {
  atMs: number;
  streams: StreamCounters[];
}

/**
 * The shared counters as they are now, in one copy: planes cut together (client and server) are each copied before
 * any is decoded, so they are cut microseconds apart, not a decoding apart.
 */
export function copyCounters(buffers: CounterBuffers): Float64Array {
  return new Float64Array(buffers.counters).slice();
}

/** Decodes `c`, a copyCounters() of `buffers`; the histograms are copied now when asked for. */
export function snapshot(buffers: CounterBuffers, c: Float64Array, streams: number, atMs: number, withHistograms: boolean): Snapshot {
  const h = new Uint32Array(buffers.histograms);
  const out: StreamCounters[] = [];
  for (let i = 0; i < streams; i++) {
    const o = i * SLOTS_PER_STREAM;
    out.push({
      bytes: c[o + Slot.bytes]!,
      packets: c[o + Slot.packets]!,
      transactions: c[o + Slot.transactions]!,
      lost: c[o + Slot.lost]!,
      outOfOrder: c[o + Slot.outOfOrder]!,
      jitter: c[o + Slot.jitter]!,
      sendErrors: c[o + Slot.sendErrors]!,
      latencySumUs: c[o + Slot.latencySumUs]!,
      connections: c[o + Slot.connections]!,
      closed: c[o + Slot.closed]!,
      latencyMinUs: c[o + Slot.latencyMinUs]!,
      latencyMaxUs: c[o + Slot.latencyMaxUs]!,
      maxSeq: c[o + Slot.maxSeq]!,
      duplicates: c[o + Slot.duplicates]!,
      received: c[o + Slot.received]!,
      tcpRttUs: c[o + Slot.tcpRttUs]!,
      tcpCwnd: c[o + Slot.tcpCwnd]!,
      tcpRetrans: c[o + Slot.tcpRetrans]!,
      histogram: withHistograms ? h.slice(i * HIST_BUCKETS, (i + 1) * HIST_BUCKETS) : new Uint32Array(0),
    });
  }
  return { atMs, streams: out };
}

/** Counters moved between two snapshots of the same stream; levels (jitter, min/max, maxSeq) come from `to`. */
export function delta(from: StreamCounters, to: StreamCounters): StreamCounters {
  const hist = new Uint32Array(to.histogram.length);
  for (let i = 0; i < hist.length; i++) hist[i] = to.histogram[i]! - (from.histogram[i] ?? 0);
  return {
    bytes: to.bytes - from.bytes,
    packets: to.packets - from.packets,
    transactions: to.transactions - from.transactions,
    lost: to.lost - from.lost,
    outOfOrder: to.outOfOrder - from.outOfOrder,
    jitter: to.jitter,
    sendErrors: to.sendErrors - from.sendErrors,
    latencySumUs: to.latencySumUs - from.latencySumUs,
    connections: to.connections - from.connections,
    closed: to.closed - from.closed,
    latencyMinUs: to.latencyMinUs,
    latencyMaxUs: to.latencyMaxUs,
    maxSeq: to.maxSeq,
    duplicates: to.duplicates - from.duplicates,
    received: to.received - from.received,
    tcpRttUs: to.tcpRttUs,
    tcpCwnd: to.tcpCwnd,
    tcpRetrans: to.tcpRetrans - from.tcpRetrans,
    histogram: hist,
  };
}
