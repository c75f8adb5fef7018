/**
 * The figures iperf3 prints, with its formulas (iperf_api.c), so text and JSON agree and each is tested once.
 * They belong in src/formulas.ts once that module exists; they are iperf3-specific only in their edge cases
 * (a zero duration gives 0, never Infinity).
 */
import type { ReportStream } from "./report-model.ts";

/** Bytes per second over an interval or a whole test; 0 for a zero-length window. */
export function intervalRate(bytes: number, seconds: number): number {
  return seconds > 0 ? bytes / seconds : 0;
}

/** bits_per_second in the JSON documents. */
export function bitsPerSecond(bytes: number, seconds: number): number {
  return seconds > 0 ? (bytes * 8) / seconds : 0;
}

/** Lost datagrams as a percentage of those expected; 0 when none were expected. */
export function lossPercent(lost: number, total: number): number {
  return total > 0 ? (100 * lost) / total : 0;
}

/** Percent of one core used over `wallS` seconds, from CPU seconds (iperf3's cpu_util). */
export function cpuPercent(cpuS: number, wallS: number): number {
  return wallS > 0 ? (100 * cpuS) / wallS : 0;
}

/**
 * The durations iperf3's summary uses, taken from the FIRST stream for every line (as iperf_print_results does):
 * its own duration on its own side, the peer's from the results on the other, falling back to its own when the
 * peer sent none (pre-3.2 peers).
 */
export function summaryTimes(first: ReportStream | undefined): { senderTimeS: number; receiverTimeS: number; endTimeS: number } {
  if (!first) return { senderTimeS: 0, receiverTimeS: 0, endTimeS: 0 };
  const own = first.endTimeS;
  const peer = first.peerTimeS || own;
  return first.sender ? { senderTimeS: own, receiverTimeS: peer, endTimeS: own } : { senderTimeS: peer, receiverTimeS: own, endTimeS: own };
}
