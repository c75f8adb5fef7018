import {
  avgFrameSize,
  buffers,
  buffersPerSecond,
  bytesPerCompletion,
  bytesPerSecond,
  cyclesPerByte,
  eventsPerSecond,
  kibibytesPerSecond,
  kilobytesPerSecond,
  mean,
  mebibytes,
  mebibytesPerSecond,
  megabitsPerSecond,
  megabytes,
  megabytesPerSecond,
  ntttcpWindowsCyclesPerByte,
  packetsPerEvent,
  throughputBps,
} from "../../src/formulas.ts";
import type { NtttcpResults } from "./results.ts";

/**
 * Every figure the ntttcp formatters print, from src/formulas.ts with the inputs each tool uses
 * (docs/protocols/ntttcp-linux.md §9, docs/protocols/ntttcp-windows.md §6.1). undefined = cannot be computed from
 * what was measured (printed as n/a).
 * Division by zero gives 0, as in both originals.
 */

const both = (a: number | undefined, b: number | undefined, f: (a: number, b: number) => number) =>
  a === undefined || b === undefined ? undefined : f(a, b);

/** ntttcp-for-linux throughput text: bits/s, /1000 while > 1000 (at most 3 times), 2 decimals, bps…Gbps. */
export function linuxThroughput(bytes: number, seconds: number): string {
  const units = ["bps", "Kbps", "Mbps", "Gbps"];
  let v = throughputBps(bytes, seconds);
  let u = 0;
  while (v > 1000 && u < 3) {
    v /= 1000;
    u++;
  }
  return `${v.toFixed(2)}${units[u]}`;
}

/** Linux figures, all decimal units. */
export function linuxFigures(r: NtttcpResults) {
  const T = r.seconds;
  const B = r.totalBytes;
  const h = r.host;
  return {
    totalMB: megabytes(B),
    MBps: megabytesPerSecond(B, T),
    mbps: megabitsPerSecond(B, T),
    Bps: bytesPerSecond(B, T),
    cyclesPerByte:
      h.cpuMHz === undefined || h.cpuCores === undefined || h.idlePct === undefined
        ? undefined
        : cyclesPerByte({ mhz: h.cpuMHz, cores: h.cpuCores, seconds: T, busyFraction: 1 - h.idlePct / 100 }, B),
    interruptsPerSec: h.interrupts === undefined ? undefined : eventsPerSecond(h.interrupts, T),
    packetsPerInterrupt: both(h.interrupts, h.nicTxPackets !== undefined && h.nicRxPackets !== undefined ? h.nicTxPackets + h.nicRxPackets : undefined, (i, p) => packetsPerEvent(p, i)),
    thread: (bytes: number, seconds: number) => ({
      KBps: kilobytesPerSecond(bytes, seconds),
      MBps: megabytesPerSecond(bytes, seconds),
      mbps: megabitsPerSecond(bytes, seconds),
    }),
  };
}

/** Windows figures: MB and KB are binary, mbps decimal. */
export function windowsFigures(r: NtttcpResults, bufferLen: number) {
  const t = r.seconds;
  const B = r.totalBytes;
  const h = r.host;
  const packets = r.role === "sender" ? h.segmentsOut : h.segmentsIn;
  /** Windows "Avg. CPU %" is the system-wide busy share: user + kernel − idle over all processors. */
  const avgCpu = h.idlePct === undefined ? undefined : 100 - h.idlePct;
  const ios = r.threads.every((x) => x.ios !== undefined) ? r.threads.reduce((n, x) => n + (x.ios ?? 0), 0) : undefined;
  const perThreadAvg = r.threads.map((x) => (x.ios === undefined ? undefined : bytesPerCompletion(x.bytes, x.ios)));
  return {
    totalMB: mebibytes(B),
    MBps: mebibytesPerSecond(B, t),
    mbps: megabitsPerSecond(B, t),
    Bps: bytesPerSecond(B, t),
    avgFrameSize: packets === undefined ? undefined : avgFrameSize(B, packets),
    buffers: buffers(B, bufferLen),
    buffersPerSec: buffersPerSecond(B, bufferLen, t),
    avgCpu,
    cyclesPerByte:
      avgCpu === undefined || h.cpuCores === undefined || h.cpuMHz === undefined
        ? undefined
        : ntttcpWindowsCyclesPerByte(avgCpu, h.cpuCores, h.cpuMHz, B, t),
    interruptsPerSec: h.interrupts === undefined ? undefined : eventsPerSecond(h.interrupts, t),
    packetsPerInterrupt: both(h.segmentsIn, h.interrupts, packetsPerEvent),
    dpcsPerSec: h.dpcs === undefined ? undefined : eventsPerSecond(h.dpcs, t),
    packetsPerDpc: both(h.segmentsIn, h.dpcs, packetsPerEvent),
    avgBytesPerCompl: ios === undefined ? undefined : bytesPerCompletion(B, ios),
    // NTttcp's "threads_avg_bytes_per_compl": the plain mean of each thread's Avg B / Compl.
    threadsAvgBytesPerCompl: perThreadAvg.some((x) => x === undefined) ? undefined : mean(perThreadAvg as number[]),
    thread: (bytes: number, seconds: number, ios: number | undefined) => ({
      KBps: kibibytesPerSecond(bytes, seconds),
      MBps: mebibytesPerSecond(bytes, seconds),
      mbps: megabitsPerSecond(bytes, seconds),
      Bps: bytesPerSecond(bytes, seconds),
      avgBytesPerCompl: ios === undefined ? undefined : bytesPerCompletion(bytes, ios),
    }),
  };
}
