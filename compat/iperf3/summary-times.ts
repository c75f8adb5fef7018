/**
 * iperf3's choice of durations for its summary (iperf_print_results); the figures themselves come from
 * src/formulas.ts.
 */
import type { ReportStream } from "./report-model.ts";

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
