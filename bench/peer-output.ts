import { z } from "zod";
import type { InterimRate } from "../src/formulas.ts";

/** Readers of the stock tools' machine-readable output: the figures the bench compares, nothing else. */

const Iperf3Sum = z.object({
  seconds: z.number(),
  bytes: z.number(),
  bits_per_second: z.number(),
  packets: z.number().optional(),
  lost_packets: z.number().optional(),
  lost_percent: z.number().optional(),
});

const Iperf3Json = z.object({
  error: z.string().optional(),
  end: z.object({ sum_received: Iperf3Sum.optional(), sum_received_bidir_reverse: Iperf3Sum.optional() }),
});

export interface ReceivedFigures {
  bitsPerSecond: number;
  /** UDP only: datagrams the receiver is told were sent, and the share of them it never got. */
  packets?: number;
  lostPercent?: number;
}

/**
 * iperf3 -J (client side): the receiver's figures, which iperf3 3.12 reports as end.sum_received for TCP and UDP
 * alike (for UDP its bytes are what the server received; packets and lost_packets come from the server).
 */
export function iperf3Received(text: string): ReceivedFigures {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new Error(`iperf3 printed no JSON document: ${firstLine(text)}`);
  }
  const doc = Iperf3Json.parse(raw);
  if (doc.error) throw new Error(`iperf3: ${doc.error}`);
  const sum = doc.end.sum_received;
  if (!sum) throw new Error("iperf3 JSON has no end.sum_received");
  // --bidir: the reverse streams' receiver (the client) is a second sum; the test moved both.
  const reverse = doc.end.sum_received_bidir_reverse;
  if (reverse) return { bitsPerSecond: sum.bits_per_second + reverse.bits_per_second };
  return { bitsPerSecond: sum.bits_per_second, packets: sum.packets, lostPercent: sum.lost_percent };
}

/**
 * iperf 2 -y C, TCP: one line per stream (timestamp,src,sport,dst,dport,id,interval,bytes,bits/s); with -P a
 * summary line has id -1, which 2.1.8's server does not always print, so without it the streams are added up.
 */
export function iperf2CsvTotal(text: string): { bitsPerSecond: number; streams: number } {
  let sum: number | undefined;
  let total = 0, streams = 0;
  for (const line of text.split("\n")) {
    const f = line.trim().split(",");
    if (f.length < 9) continue;
    const id = Number(f[5]), bps = Number(f[8]);
    if (!Number.isFinite(id) || !Number.isFinite(bps)) continue;
    if (id === -1) sum = bps;
    else {
      total += bps;
      streams++;
    }
  }
  if (streams === 0 && sum === undefined) throw new Error(`iperf printed no CSV report: ${firstLine(text)}`);
  return { bitsPerSecond: sum ?? total, streams };
}

/** netperf -k KEY,...: one KEY=VALUE line each. */
export function netperfKeyval(text: string): Map<string, string> {
  const kv = new Map<string, string>();
  for (const line of text.split("\n")) {
    const eq = line.indexOf("=");
    if (eq > 0) kv.set(line.slice(0, eq).trim(), line.slice(eq + 1).trim());
  }
  return kv;
}

export function netperfNumber(kv: Map<string, string>, key: string): number {
  const v = kv.get(key);
  const n = v === undefined ? NaN : Number(v);
  if (!Number.isFinite(n)) throw new Error(`netperf output has no numeric ${key} (got ${v ?? "nothing"})`);
  return n;
}

/**
 * ntttcp-for-linux receiver console: the "Totals" block's total bytes over its test duration (the printed
 * "throughput :35.56Gbps" is the same figure rounded to two digits).
 */
export function ntttcpReceiverBps(text: string): number {
  const bytes = /total bytes\s*:(\d+)/.exec(text)?.[1];
  const secs = /test duration\s*:([\d.]+) seconds/.exec(text)?.[1];
  if (bytes === undefined || secs === undefined || Number(secs) <= 0) {
    throw new Error(`ntttcp printed no totals: ${firstLine(text)}`);
  }
  return (Number(bytes) * 8) / Number(secs);
}

function firstLine(text: string): string {
  return text.trim().split("\n")[0]?.slice(0, 120) || "(empty output)";
}

/** neper's closing `key=value` lines (client side): aggregate transactions/s and the p99 it was asked for with -p. */
export function neperRr(text: string): { transactionsPerSecond: number; p99Us: number } {
  const kv = new Map<string, string>();
  for (const line of text.split("\n")) {
    const eq = line.indexOf("=");
    if (eq > 0) kv.set(line.slice(0, eq).trim(), line.slice(eq + 1).trim());
  }
  const num = (k: string) => {
    const v = Number(kv.get(k));
    if (!kv.has(k) || !Number.isFinite(v)) throw new Error(`neper printed no ${k}= (run with -p 99): ${firstLine(text)}`);
    return v;
  };
  // neper reports latencies in seconds.
  return { transactionsPerSecond: num("throughput"), p99Us: num("latency_p99") * 1e6 };
}

/**
 * sockperf ping-pong: round trips per second over its valid (post-warm-up) window, and the 99th percentile it
 * prints, which with --full-rtt is the whole round trip in µs (without it sockperf halves it).
 */
export function sockperfPingPong(text: string): { transactionsPerSecond: number; p99Us: number } {
  const valid = /\[Valid Duration\] RunTime=([\d.]+) sec; SentMessages=\d+; ReceivedMessages=(\d+)/.exec(text);
  const p99 = /percentile 99\.000 =\s*([\d.]+)/.exec(text);
  if (!valid || !p99) throw new Error(`sockperf printed no valid-duration summary: ${firstLine(text.replace(/^.*version.*\n/m, ""))}`);
  return { transactionsPerSecond: Number(valid[2]) / Number(valid[1]), p99Us: Number(p99[1]) };
}

/** sockperf throughput: the sender's message rate (its server prints no count of what it received). */
export function sockperfMessageRate(text: string): number {
  const m = /Summary: Message Rate is (\d+) \[msg\/sec\]/.exec(text);
  if (!m) throw new Error(`sockperf printed no message rate: ${firstLine(text)}`);
  return Number(m[1]);
}

/** Every numeric KEY=VALUE of one key in output that holds several netperf -k blocks (anyperf netperf --instances). */
export function netperfNumbers(text: string, key: string): number[] {
  const out: number[] = [];
  for (const line of text.split("\n")) {
    const eq = line.indexOf("=");
    if (eq > 0 && line.slice(0, eq).trim() === key) {
      const n = Number(line.slice(eq + 1).trim());
      if (Number.isFinite(n)) out.push(n);
    }
  }
  return out;
}

/** A netperf's -D interim figures in -k output (`NETPERF_INTERIM_RESULT[i]`...): each interval's rate, length and end (epoch seconds). */
export function netperfInterims(text: string): InterimRate[] {
  const of = (key: string) => netperfNumbers(text.replace(new RegExp(`^${key}\\[\\d+\\]=`, "gm"), `${key}=`), key);
  const rates = of("NETPERF_INTERIM_RESULT");
  const seconds = of("NETPERF_INTERVAL");
  const ends = of("NETPERF_ENDING");
  if (seconds.length !== rates.length || ends.length !== rates.length) throw new Error("netperf interim figures without their interval or end time");
  return rates.map((rate, i) => ({ rate, seconds: seconds[i]!, endS: ends[i]! }));
}

/** One series of flent's summary (`-f summary`): its mean over the run and how many data points it had. */
export interface FlentSeries {
  avg: number;
  points: number;
}

/** flent's summary: " TCP download BE  :  3050.91  3010.40  4404.28 Mbits/s  100" → series name → avg and data points. */
export function flentSummary(text: string): Map<string, FlentSeries> {
  const out = new Map<string, FlentSeries>();
  for (const m of text.matchAll(/^ (.+?)\s+:\s+([\d.]+)\s+(?:[\d.]+|N\/A)\s+(?:[\d.]+|N\/A)\s+(?:ms|Mbits\/s)\s+(\d+)$/gm)) {
    out.set(m[1]!.trim(), { avg: Number(m[2]), points: Number(m[3]) });
  }
  return out;
}

/** A flent series' mean in bit/s (flent prints Mbit/s), or an error naming the series flent did not print. */
export function flentMbits(series: Map<string, FlentSeries>, name: string): number {
  const s = series.get(name);
  if (!s || s.points === 0) throw new Error(`flent printed no "${name}" series`);
  return s.avg * 1e6;
}
