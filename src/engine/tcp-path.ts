import { median } from "../formulas.ts";
import type { TcpInfo } from "../sockopt/tcp-info.ts";
import type { TcpPath } from "../diagnosis/schema.ts";

/** One TCP_INFO read of a sending stream's first socket, stamped when the main thread received it. */
export interface TcpSample {
  atMs: number;
  info: TcpInfo;
}

/**
 * Reads kept per plane, shared by its sending streams (an hour of one stream at one a second; a thousand streams keep
 * 200 s each): the latest are the window's, and a longer window is judged on its last part.
 */
const SAMPLES_PER_PLANE = 200_000;
const SAMPLES_PER_STREAM = 3600;

export function samplesKept(sendingStreams: number): number {
  return Math.max(16, Math.min(SAMPLES_PER_STREAM, Math.floor(SAMPLES_PER_PLANE / Math.max(1, sendingStreams))));
}

/** What tcpPath() reads of a TCP_INFO, kept apart from the rest of it (a read is some 40 fields). */
export function pathFields(info: TcpInfo): TcpInfo {
  const { state, busy_time, rwnd_limited, sndbuf_limited, delivery_rate, delivery_rate_app_limited, rtt_us, min_rtt } = info;
  return { state, busy_time, rwnd_limited, sndbuf_limited, delivery_rate, delivery_rate_app_limited, rtt_us, min_rtt };
}

/**
 * The last sample at or before `ms`, or else the first one (a window that opened before the first read); the Workers
 * read once a second, so a window is bracketed by the reads around it and its chrono figures span at most a second
 * more on each side.
 */
function atOrBefore(s: readonly TcpSample[], ms: number): TcpSample | undefined {
  let out: TcpSample | undefined;
  for (const x of s) if (x.atMs <= ms || !out) out = x;
  return out;
}
function atOrAfter(s: readonly TcpSample[], ms: number): TcpSample | undefined {
  for (const x of s) if (x.atMs >= ms) return x;
  return s[s.length - 1];
}

const grew = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined || b < a ? undefined : b - a);

/**
 * What the sending sockets' TCP_INFO says of the path over one window (fromMs..toMs, the main thread's clock): where
 * each sender's time went (the kernel's chrono stats: busy_time holds rwnd_limited and sndbuf_limited, the rest of
 * busy is the network's cwnd/pacing; not busy is the application's), the delivery rate, the RTTs. Each stream's
 * delivery rate is the median of its reads inside the window (one a second) leaving out those the kernel marks
 * application-limited, unless all are; streams share the bottleneck, so the path's rate is their sum.
 */
export function tcpPath(series: readonly (readonly TcpSample[])[], fromMs: number, toMs: number): TcpPath | undefined {
  let streams = 0, elapsed = 0, busy = 0, rwnd = 0, sndbuf = 0, delivery = 0, limited = 0, rated = 0;
  let minRtt: number | undefined;
  const srtts: number[] = [];
  for (const s of series) {
    const a = atOrBefore(s, fromMs);
    const b = atOrAfter(s, toMs);
    if (!a || !b || b.atMs <= a.atMs) continue;
    const dBusy = grew(a.info.busy_time, b.info.busy_time);
    if (dBusy === undefined) continue;
    streams++;
    elapsed += (b.atMs - a.atMs) * 1000;
    busy += dBusy;
    rwnd += grew(a.info.rwnd_limited, b.info.rwnd_limited) ?? 0;
    sndbuf += grew(a.info.sndbuf_limited, b.info.sndbuf_limited) ?? 0;
    const inside = s.filter((x) => x.atMs >= fromMs && x.atMs <= toMs);
    const reads = inside.length ? inside : [b];
    const rates = reads.filter((x) => x.info.delivery_rate !== undefined);
    const full = rates.filter((x) => !x.info.delivery_rate_app_limited);
    const used = full.length ? full : rates;
    if (used.length) {
      rated++;
      if (!full.length) limited++;
      delivery += median(used.map((x) => x.info.delivery_rate! * 8));
    }
    const rtt = reads.map((x) => x.info.rtt_us).filter((x): x is number => x !== undefined && x > 0);
    if (rtt.length) srtts.push(median(rtt));
    const m = b.info.min_rtt;
    if (m !== undefined && m > 0 && m < 0xffffffff) minRtt = Math.min(minRtt ?? m, m);
  }
  if (streams === 0) return undefined;
  const out: TcpPath = { streams, elapsed_us: elapsed, busy_us: busy, rwnd_limited_us: rwnd, sndbuf_limited_us: sndbuf };
  if (rated) {
    out.delivery_bps = delivery;
    out.delivery_app_limited = limited === rated;
  }
  if (srtts.length) out.srtt_us = srtts.reduce((x, y) => x + y, 0) / srtts.length;
  if (minRtt !== undefined) out.min_rtt_us = minRtt;
  return out;
}
