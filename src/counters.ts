import type { TcpInfo } from "./sockopt/tcp-info-schema.ts";

/**
 * Live counters shared between the Workers (writers) and the main thread (reader) through one SharedArrayBuffer.
 * Workers only ever add to cumulative totals; every window (warm-up, measured, interval) is the difference of two
 * snapshots, so the workers need not know about phases and sampling never sends a message.
 */

/**
 * Every per-stream field, in slot order: a `counter` is a running total (a window subtracts its ends, zero is 0), a
 * `level` is a value now (a window takes its later end, zero keeps it). Slots, decoding, delta and zero all come
 * from this one table, so a new field is one line here and the Worker that writes it.
 */
export const COUNTER_FIELDS = [
  { name: "bytes", kind: "counter" }, // payload bytes moved (sent by a sender, received by a receiver)
  { name: "packets", kind: "counter" }, // datagrams; for TCP write() calls, or receive calls of at most the stream's readSize
  { name: "transactions", kind: "counter" },
  { name: "lost", kind: "counter" }, // datagrams missing from the sequence (net of late arrivals)
  { name: "outOfOrder", kind: "counter" },
  { name: "jitter", kind: "level" }, // RFC 1889 running jitter in seconds
  { name: "sendErrors", kind: "counter" },
  { name: "latencySumUs", kind: "counter" },
  { name: "connections", kind: "counter" }, // sockets opened or accepted so far
  { name: "closed", kind: "counter" }, // sockets closed so far
  { name: "lastActivityMs", kind: "level" }, // when a byte last moved (ms, Worker's performance clock): idle detection
  { name: "latencyMinUs", kind: "level" },
  { name: "latencyMaxUs", kind: "level" },
  { name: "maxSeq", kind: "level" },
  { name: "duplicates", kind: "counter" },
  { name: "received", kind: "counter" }, // bytes a sending stream read back on its socket (tcp-send countReceived)
  // From TCP_INFO of the stream's open sockets, sampled once a second by the Worker (Linux, Bun):
  { name: "tcpRttUs", kind: "level" }, // mean smoothed RTT
  { name: "tcpCwnd", kind: "level" }, // sum of congestion windows, segments
  { name: "tcpRetrans", kind: "counter" }, // segments retransmitted, summed over every socket the stream ever had
  // Every timed event (StreamContext.latency, rr-loops.c): how many, and Σ µs², so a window has its own count and
  // standard deviation (min and max of a window come from its histogram).
  { name: "timed", kind: "counter" },
  { name: "latencySqSumUs", kind: "counter" },
  // Isochronous senders (iperf 2 --isochronous): frames sent whole, frame slots skipped because a frame was late,
  // and how many times that happened.
  { name: "frames", kind: "counter" },
  { name: "framesMissed", kind: "counter" },
  { name: "slips", kind: "counter" },
] as const satisfies readonly { name: string; kind: "counter" | "level" }[];

export type CounterField = (typeof COUNTER_FIELDS)[number]["name"];

/** Slot of each field inside a stream's block (Workers write `c[o + Slot.bytes]`). */
export const Slot: { readonly [K in CounterField]: number } = Object.freeze(
  Object.fromEntries(COUNTER_FIELDS.map((f, i) => [f.name, i])) as { [K in CounterField]: number },
);
export const SLOTS_PER_STREAM = 28;
if (COUNTER_FIELDS.length > SLOTS_PER_STREAM) throw new Error("COUNTER_FIELDS outgrew SLOTS_PER_STREAM");

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

/** One stream's fields at an instant, or moved over a window; `histogram` holds per-bucket transaction counts. */
export type StreamCounters = { [K in CounterField]: number } & { histogram: Uint32Array };

/** A copy of every stream's counters at one instant. */
export interface Snapshot {
  atMs: number;
  streams: StreamCounters[];
  /**
   * TCP_INFO read on the main thread at this instant, by stream, for the streams a Test reads it of
   * (TestRun.readTcpInfo); their tcpRttUs, tcpCwnd and tcpRetrans come from it too.
   */
  tcpInfo?: (TcpInfo | undefined)[];
}

/**
 * The shared counters as they are now, in one copy: planes cut together (client and server) are each copied before
 * any is decoded, so they are cut microseconds apart, not a decoding apart.
 */
export function copyCounters(buffers: CounterBuffers): Float64Array {
  return new Float64Array(buffers.counters).slice();
}

const EMPTY = new Uint32Array(0);

/**
 * The decoder, window and origin, compiled once from the table into single object literals: a loop storing fields
 * by name ran 4x slower, and the main thread decodes every stream ten times a second while Workers write.
 */
const literal = (value: (name: CounterField, i: number, kind: "counter" | "level") => string) =>
  `({ ${COUNTER_FIELDS.map((f, i) => `${f.name}: ${value(f.name, i, f.kind)}`).join(", ")}, histogram: h })`;
const decode = new Function("c", "o", "h", `return ${literal((_, i) => `c[o + ${i}]`)};`) as (c: Float64Array, o: number, h: Uint32Array) => StreamCounters;
const windowOf = new Function("a", "b", "h", `return ${literal((n, _, k) => (k === "counter" ? `b.${n} - a.${n}` : `b.${n}`))};`) as (a: StreamCounters, b: StreamCounters, h: Uint32Array) => StreamCounters;
const originOf = new Function("s", "h", `return ${literal((n, _, k) => (k === "counter" ? "0" : `s.${n}`))};`) as (s: StreamCounters, h: Uint32Array) => StreamCounters;

/**
 * One stream's histogram, copied 8 bytes at a time: a typed-array copy out of shared memory goes element by element,
 * so a Float64Array view copies the same bytes in half the steps of a Uint32Array (at 1,000 TCP_RR flows the per-
 * interval histogram copies were 60 % of the main thread's time, measured with bun --cpu-prof). The copy lands in a
 * fresh ArrayBuffer: reading `.buffer` of a typed array makes JSC materialise it (seen in the same profiles).
 */
function copyHistogram(histograms: SharedArrayBuffer, stream: number): Uint32Array {
  const bytes = HIST_BUCKETS * 4;
  const out = new ArrayBuffer(bytes);
  new Float64Array(out).set(new Float64Array(histograms, stream * bytes, bytes / 8));
  return new Uint32Array(out);
}

/** Decodes `c`, a copyCounters() of `buffers`; the histograms are copied now when asked for. */
export function snapshot(buffers: CounterBuffers, c: Float64Array, streams: number, atMs: number, withHistograms: boolean): Snapshot {
  const out: StreamCounters[] = new Array(streams);
  for (let i = 0; i < streams; i++) {
    const o = i * SLOTS_PER_STREAM;
    // Only a stream that timed a transaction has a histogram to copy (servers and bulk streams never do): at 1,000
    // TCP_RR flows that halves the main thread's per-interval copying.
    out[i] = decode(c, o, withHistograms && c[o + Slot.latencyMaxUs]! > 0 ? copyHistogram(buffers.histograms, i) : EMPTY);
  }
  return { atMs, streams: out };
}

/** What moved between two snapshots of the same stream: counters subtract, levels come from `to`. */
export function delta(from: StreamCounters, to: StreamCounters): StreamCounters {
  // Nothing timed at `from` (every stream at a window's start without warm-up): the window's histogram is `to`'s own
  // copy, shared rather than copied again (histograms are never written after their cut).
  if (from.histogram.length === 0) return windowOf(from, to, to.histogram);
  const hist = new Uint32Array(to.histogram.length);
  for (let i = 0; i < hist.length; i++) hist[i] = to.histogram[i]! - (from.histogram[i] ?? 0);
  return windowOf(from, to, hist);
}

/** The origin of a window that counts from nothing: counters at 0, levels as they are in `s`. */
export function zero(s: StreamCounters): StreamCounters {
  return originOf(s, EMPTY);
}

const BLANK = originOf(decode(new Float64Array(SLOTS_PER_STREAM), 0, EMPTY), EMPTY);

/** A stream that has moved nothing: every field 0 (tests, and streams not opened yet). */
export function blankCounters(): StreamCounters {
  return { ...BLANK };
}
