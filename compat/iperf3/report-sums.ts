/**
 * The per-direction walks and totals iperf3 makes before it prints an interval or the summary
 * (iperf_print_intermediate / iperf_print_results), shared by the text and the JSON report so both print the same
 * figures. Every sum is taken whatever the protocol; the formatters decide which ones iperf3 shows.
 */
import type { IntervalResult, ReportStream, ReportTest } from "./report-model.ts";

/** The order iperf3 walks the streams: sender streams first on a bidir client, receiver streams first on a server. */
export function passes(t: ReportTest): boolean[] {
  if (t.mode === "bidir") return t.role === "client" ? [true, false] : [false, true];
  return [t.mode === "sender"];
}

/** One direction's streams in interval `k`, and their sums. */
export interface IntervalSums {
  /** The direction: streams this side sends on (true) or receives on. */
  mustSend: boolean;
  streams: Array<{ stream: ReportStream; interval: IntervalResult }>;
  bytes: number;
  retransmits: number;
  packets: number;
  lost: number;
  /** Sum of the streams' jitter (s); iperf3 prints it divided by -P. */
  jitterS: number;
}

/**
 * Interval `k` per direction, or undefined when iperf3 drops it: a short trailing interval in which no stream
 * moved data.
 */
export function intervalSums(t: ReportTest, k: number): IntervalSums[] | undefined {
  const keep = t.streams.some((s) => {
    const i = s.intervals[k];
    return i !== undefined && (i.durationS >= t.statsIntervalS * 0.1 || i.bytes > 0);
  });
  if (!keep) return undefined;
  return passes(t).map((mustSend) => {
    const sums: IntervalSums = { mustSend, streams: [], bytes: 0, retransmits: 0, packets: 0, lost: 0, jitterS: 0 };
    for (const stream of t.streams) {
      const interval = stream.intervals[k];
      if (stream.sender !== mustSend || !interval) continue;
      sums.streams.push({ stream, interval });
      sums.bytes += interval.bytes;
      sums.retransmits += interval.retransmits;
      sums.packets += interval.packets;
      sums.lost += interval.lost;
      sums.jitterS += interval.jitterS;
    }
    return sums;
  });
}

/** One stream's end-of-test UDP figures, omitted seconds taken out. */
export interface StreamTotals {
  stream: ReportStream;
  /** Datagrams the sending side counted, and the receiving side's highest sequence number. */
  senderPackets: number;
  receiverPackets: number;
  /** The sender's count, or the receiver's where the sender's is unknown (iperf3's packet_count || peer's). */
  packets: number;
  lost: number;
  outOfOrder: number;
}

/** One direction's end-of-test totals. */
export interface SummarySums {
  mustSend: boolean;
  /** Whether this direction's sender reports retransmits (1, 0 or -1): in bidir mode the side that sends it. */
  hasRetransmits: number;
  streams: StreamTotals[];
  sent: number;
  received: number;
  retransmits: number;
  packets: number;
  senderPackets: number;
  receiverPackets: number;
  lost: number;
  /** Sum of the streams' jitter (s); iperf3 prints it divided by -P. */
  jitterS: number;
}

export function summarySums(t: ReportTest): SummarySums[] {
  return passes(t).map((mustSend) => {
    const hasRetransmits = t.mode === "bidir" && !mustSend ? t.otherSideHasRetransmits : t.senderHasRetransmits;
    const sums: SummarySums = {
      mustSend, hasRetransmits, streams: [], sent: 0, received: 0, retransmits: 0, packets: 0, senderPackets: 0, receiverPackets: 0, lost: 0, jitterS: 0,
    };
    for (const s of t.streams) {
      if (s.sender !== mustSend) continue;
      const sent = s.sender ? s.packetCount : s.peerPacketCount;
      const seen = s.sender ? s.peerPacketCount : s.packetCount;
      const omitted = s.omittedPacketCount;
      const one: StreamTotals = {
        stream: s,
        senderPackets: sent - omitted,
        receiverPackets: seen - omitted,
        packets: (sent || seen) - omitted,
        lost: s.cntError - s.omittedCntError,
        outOfOrder: s.outOfOrder - s.omittedOutOfOrder,
      };
      sums.streams.push(one);
      sums.sent += s.bytesSent;
      sums.received += s.bytesReceived;
      sums.retransmits += s.retransmits;
      sums.packets += one.packets;
      sums.senderPackets += one.senderPackets;
      sums.receiverPackets += one.receiverPackets;
      sums.lost += one.lost;
      sums.jitterS += s.jitterS;
    }
    return sums;
  });
}
