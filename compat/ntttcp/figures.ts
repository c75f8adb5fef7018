import type { NtttcpResults } from "./results.ts";

/**
 * Every figure the ntttcp formatters print, with the formula each tool uses (docs/protocols/ntttcp-linux.md §9,
 * docs/protocols/ntttcp-windows.md §6.1). undefined = cannot be computed from what was measured (printed as n/a).
 * Division by zero gives 0, as in both originals.
 */

const MiB = 1048576;
const div = (a: number, b: number) => (b === 0 ? 0 : a / b);
const both = (a: number | undefined, b: number | undefined, f: (a: number, b: number) => number) =>
  a === undefined || b === undefined ? undefined : f(a, b);

/** ntttcp-for-linux throughput text: bits/s, /1000 while > 1000 (at most 3 times), 2 decimals, bps…Gbps. */
export function linuxThroughput(bytes: number, seconds: number): string {
  const units = ["bps", "Kbps", "Mbps", "Gbps"];
  let v = div(bytes * 8, seconds);
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
    totalMB: B / 1e6,
    MBps: div(B / 1e6, T),
    mbps: div(B / 1e6, T) * 8,
    Bps: div(B, T),
    /** MHz·10⁶ · T · cores · (1 − idle) / bytes. */
    cyclesPerByte:
      h.cpuMHz === undefined || h.cpuCores === undefined || h.idlePct === undefined
        ? undefined
        : B === 0
          ? 0
          : (h.cpuMHz * 1e6 * T * h.cpuCores * (1 - h.idlePct / 100)) / B,
    interruptsPerSec: h.interrupts === undefined ? undefined : div(h.interrupts, T),
    packetsPerInterrupt: both(h.interrupts, h.nicTxPackets !== undefined && h.nicRxPackets !== undefined ? h.nicTxPackets + h.nicRxPackets : undefined, (i, p) => div(p, i)),
    thread: (bytes: number, seconds: number) => ({ KBps: div(bytes / 1e3, seconds), MBps: div(bytes / 1e6, seconds), mbps: div(bytes / 1e6, seconds) * 8 }),
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
  const buffers = B / bufferLen;
  const ios = r.threads.every((x) => x.ios !== undefined) ? r.threads.reduce((n, x) => n + (x.ios ?? 0), 0) : undefined;
  const perThreadAvg = r.threads.map((x) => (x.ios === undefined ? undefined : div(x.bytes, x.ios)));
  return {
    totalMB: B / MiB,
    MBps: div(B, t) / MiB,
    mbps: (div(B, t) * 8) / 1e6,
    Bps: div(B, t),
    avgFrameSize: packets === undefined ? undefined : div(B, packets),
    buffers,
    buffersPerSec: div(buffers, t),
    avgCpu,
    /** (Avg CPU/100) · P · MHz·10⁶ / (B/t). */
    cyclesPerByte:
      avgCpu === undefined || h.cpuCores === undefined || h.cpuMHz === undefined ? undefined : div((avgCpu / 100) * h.cpuCores * h.cpuMHz * 1e6, div(B, t)),
    interruptsPerSec: h.interrupts === undefined ? undefined : div(h.interrupts, t),
    packetsPerInterrupt: both(h.segmentsIn, h.interrupts, (p, i) => div(p, i)),
    avgBytesPerCompl: ios === undefined ? undefined : div(B, ios),
    threadsAvgBytesPerCompl: perThreadAvg.some((x) => x === undefined) ? undefined : div(perThreadAvg.reduce((a, x) => a! + x!, 0)!, perThreadAvg.length),
    thread: (bytes: number, seconds: number, ios: number | undefined) => ({
      KBps: div(bytes, seconds) / 1024,
      MBps: div(bytes, seconds) / MiB,
      mbps: (div(bytes, seconds) * 8) / 1e6,
      Bps: div(bytes, seconds),
      avgBytesPerCompl: ios === undefined ? undefined : div(bytes, ios),
    }),
  };
}
