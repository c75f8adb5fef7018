import { packetsPerSecond } from "../../src/formulas.ts";
import { csvTcpLine, csvUdpLine } from "./csv-report.ts";
import type { Printer } from "./printer.ts";
import type { TcpStatsTracker } from "./tcp-stats.ts";
import {
  type Endpoint,
  HEADER_BW,
  HEADER_TCP_READ_ENHANCED,
  HEADER_TCP_READ_TRIP_TIMES,
  HEADER_TCP_WRITE_ENHANCED,
  HEADER_TCP_WRITE_ISOCH,
  HEADER_TCP_WRITE_TIMES,
  HEADER_UDP,
  HEADER_UDP_ENHANCED,
  HEADER_UDP_ISOCH,
  HEADER_UDP_WRITE_ENHANCED,
  HEADER_UDP_WRITE_ISOCH,
  type SentFrames,
  type UdpLatency,
  bwLine,
  sentLine,
  tcpReadEnhancedLine,
  tcpReadTripTimesLine,
  udpEnhancedLine,
  udpIsochLine,
  tcpWriteEnhancedLine,
  tcpWriteEnhancedSumLine,
  tcpWriteIsochLine,
  udpLine,
  udpSumLine,
  udpWriteEnhancedLine,
} from "./text-report.ts";
import type { FormatLetter } from "./units.ts";
import type { TimedLatency } from "../../src/engine/timed-latency.ts";
import { pdfLine } from "./pdf-line.ts";
import type { FrameFigures } from "../../interop/iperf2/isoch-frames.ts";
import { type Histograms, writePdfSpec, writeTimeBins } from "./write-times.ts";

/** How one stream of a report group prints: its transport and which way it moves data, as iperf 2's reports see it. */
export interface LineKind {
  /** Printed id: "1", or "*2" for a stream the peer asked us to send. */
  id: string;
  numericId: number;
  transport: "tcp" | "udp";
  /** Sender side of a report prints writes (-e) or what it sent, receiver side reads or what arrived. */
  role: "send" | "recv";
  /** CSV endpoints: client first. */
  client: Endpoint;
  server: Endpoint;
  /** -e TCP senders: TCP_INFO of the socket (retransmits, cwnd, RTT); absent where the runtime cannot read it. */
  tcp?: TcpStatsTracker;
  /**
   * Its lines carry the latency its stream timed (WindowFigures.latency), enhanced whatever our -e says: a TCP
   * receiver whose client stamps its bursts (--trip-times), a UDP receiver of our server under -e or --trip-times
   * (each datagram's transit). The group's sums stay as our -e has them, as 2.1.8 prints them.
   */
  timed?: boolean;
  /**
   * A timed UDP receiver of an --isochronous client: its lines add the frames (counted as the datagrams arrive, read
   * at each line: the window's count, or the whole flow's on the final one).
   */
  frames?: { window(): FrameFigures; total(): FrameFigures };
  /** A sender of --isochronous frames: its -e lines add "isoch:tx/miss/slip". */
  isochronous?: boolean;
  /** --tcp-write-times: a TCP sender's lines add its write times; with --histograms, their PDF line follows each. */
  writeTimes?: { histograms?: Histograms };
}

/** A stream's figures over one report window, in iperf 2's terms. */
export interface WindowFigures {
  bytes: number;
  /** read or write calls (TCP), datagrams (UDP). */
  calls: number;
  sendErrors: number;
  /** UDP receivers: datagrams lost and expected (highest sequence), jitter at the window's end, reordered. */
  lost: number;
  total: number;
  jitterS: number;
  outOfOrder: number;
  /** What the stream timed in the window (a --trip-times client's bursts), where it times anything. */
  latency?: TimedLatency;
  /** Its latency histogram over the window (src/histogram.ts), where the window holds one. */
  histogram?: Uint32Array;
  /** An isochronous sender's frames in the window, as iperf 2 counts them. */
  frames?: SentFrames;
}

export interface LineOptions {
  format: FormatLetter;
  enhanced: boolean;
  csv: boolean;
}

/** What -e prints in a sender's TCP columns when the socket's TCP_INFO cannot be read: iperf's "NA" form. */
const NO_TCP_INFO = { retry: 0, cwndK: null, rttUs: 0, rttVarUs: 0 };

function heading(k: { transport: "tcp" | "udp"; role: "send" | "recv"; timed?: boolean; frames?: object; isochronous?: boolean; writeTimes?: object }, enhanced: boolean): string {
  if (k.transport === "udp" && k.role === "recv") return enhanced && k.timed ? (k.frames ? HEADER_UDP_ISOCH : HEADER_UDP_ENHANCED) : HEADER_UDP;
  if (k.transport === "udp") return enhanced ? (k.isochronous ? HEADER_UDP_WRITE_ISOCH : HEADER_UDP_WRITE_ENHANCED) : HEADER_BW;
  if (!enhanced) return HEADER_BW;
  if (k.role === "send") return k.writeTimes ? HEADER_TCP_WRITE_TIMES : k.isochronous ? HEADER_TCP_WRITE_ISOCH : HEADER_TCP_WRITE_ENHANCED;
  return k.timed ? HEADER_TCP_READ_TRIP_TIMES : HEADER_TCP_READ_ENHANCED;
}

/** One stream's line over [start, end]; `final` is its whole-test line (UDP senders add "Sent N datagrams"). */
export function memberLine(p: Printer, o: LineOptions, k: LineKind, start: number, end: number, f: WindowFigures, at: Date | null, final: boolean): void {
  if (o.csv) {
    const base = { at, client: k.client, server: k.server, id: k.numericId, start, end, bytes: f.bytes, millis: o.enhanced };
    if (k.transport === "tcp") p.csvLine(csvTcpLine(base));
    else if (k.role === "send") p.csvLine(csvUdpLine({ ...base, jitterS: 0, lost: 0, total: f.calls, outOfOrder: 0 }));
    else p.csvLine(csvUdpLine({ ...base, jitterS: f.jitterS, lost: f.lost, total: f.total, outOfOrder: f.outOfOrder }));
    return;
  }
  const fig = { id: k.id, start, end, bytes: f.bytes };
  const enhanced = o.enhanced || k.timed === true;
  let text = bwLine(fig, o.format);
  if (k.transport === "udp") {
    const udp = { ...fig, jitterS: f.jitterS, lost: f.lost, total: f.total };
    const latency = () => udpLatencyOf(f.latency, packetsPerSecond(f.calls, end - start), final);
    if (k.role === "recv" && k.timed && k.frames) text = udpIsochLine(udp, latency(), final ? k.frames.total() : k.frames.window(), o.format);
    else if (k.role === "recv" && k.timed) text = udpEnhancedLine(udp, latency(), f.calls, o.format);
    else if (k.role === "recv") text = udpLine(udp, o.format);
    else if (enhanced) text = udpWriteEnhancedLine(fig, f.calls, f.sendErrors, packetsPerSecond(f.calls, end - start), o.format, k.isochronous ? f.frames : undefined);
  } else if (enhanced && k.role === "recv") {
    text = k.timed ? tcpReadTripTimesLine(fig, f.latency, f.calls, final, o.format) : tcpReadEnhancedLine(fig, f.calls, o.format);
  } else if (enhanced) {
    const tcp = k.tcp ? (final ? k.tcp.final() : k.tcp.interval()) : NO_TCP_INFO;
    text = k.isochronous && f.frames
      ? tcpWriteIsochLine(fig, f.calls, 0, tcp, f.frames, o.format)
      : tcpWriteEnhancedLine(fig, f.calls, 0, tcp, o.format, k.writeTimes ? { latency: f.latency } : undefined);
  }
  p.report(heading(k, enhanced), text);
  const hist = k.transport === "tcp" && k.role === "send" ? k.writeTimes?.histograms : undefined;
  // A window cut without histograms (past the streams an interval copies them for) prints no PDF line.
  if (hist && f.histogram && f.histogram.length > 0) {
    const { bins, high } = writeTimeBins(f.histogram, hist);
    p.report(null, pdfLine(k.id, start, end, bins, writePdfSpec(hist, final), { low: 0, high }));
  }
  // Stock counts its FIN and one more in "Sent": 92 data datagrams print "Sent 94 datagrams".
  if (final && k.transport === "udp" && k.role === "send") p.report(null, sentLine(k.id, f.calls + 2));
}

/**
 * The group's [SUM] line over [start, end] of `n` streams. Its heading and columns follow its streams when they all
 * go one way (`role`); mixed sums print plain figures. CSV prints no sums.
 */
export function sumLine(
  p: Printer,
  o: LineOptions,
  kind: { transport: "tcp" | "udp"; role: "send" | "recv" | null; writeTimes?: boolean },
  n: number,
  start: number,
  end: number,
  f: WindowFigures,
  final: boolean,
): void {
  if (o.csv) return;
  const { transport, role } = kind;
  if (transport === "udp" && role === "recv") {
    // Stock's server prints its flows' sums under the flows' own heading block.
    p.report(null, udpSumLine({ id: "SUM", start, end, bytes: f.bytes, lost: f.lost, total: f.total }, o.format));
    return;
  }
  // 2.1.8 sums write-timed streams as plain figures, under the plain heading.
  if (transport === "tcp" && o.enhanced && role === "send" && !kind.writeTimes) {
    p.report(heading({ transport, role }, true), tcpWriteEnhancedSumLine({ start, end, bytes: f.bytes }, f.calls, 0, 0, o.format));
    return;
  }
  const h = transport === "tcp" && role && !kind.writeTimes ? heading({ transport, role }, o.enhanced) : HEADER_BW;
  p.report(h, bwLine({ id: "SUM", start, end, bytes: f.bytes }, o.format));
  if (final && transport === "udp") p.report(null, sentLine(`SUM-${n}`, f.calls + 2 * n));
}

/**
 * The UDP -e latency columns (seconds) from what the stream timed in the window: every datagram's transit. An
 * interval with fewer than two prints 0 for min, max and stdev, as stock does.
 */
function udpLatencyOf(l: TimedLatency | undefined, pps: number, final: boolean): UdpLatency {
  const spread = l !== undefined && (final || l.count >= 2);
  return { meanS: (l?.meanUs ?? 0) / 1e6, minS: spread ? l.minUs / 1e6 : 0, maxS: spread ? l.maxUs / 1e6 : 0, stdevS: spread ? l.stdevUs / 1e6 : 0, pps };
}
