import { bytesPerCompletion, bytesPerSecond, interPacketGapUs, iperf2InProgressBytes, iperf2NetPower, lossPercent, packetsPerSecond, packetsPerSecondAt, sampleStdev } from "../../src/formulas.ts";
import type { TimedLatency } from "../../src/engine/timed-latency.ts";
import { formatFixed } from "../../src/units.ts";
import { type ServerReport, latencyValid } from "../../interop/iperf2/server-report.ts";
import type { FrameFigures } from "../../interop/iperf2/isoch-frames.ts";
import type { TcpInit, TcpWriteStats } from "./tcp-stats.ts";
import { type FormatLetter, formatG2, formatUnits } from "./units.ts";
import { writeTimesText } from "./write-times.ts";

/**
 * iperf 2.1.8's text report lines, as printed by the stock client and server (see the outputs in
 * tests/fixtures/iperf2/). Pure functions of the figures; the glue decides which lines to print when.
 */

export const RULE = "------------------------------------------------------------";
export const HEADER_BW = "[ ID] Interval       Transfer     Bandwidth";
export const HEADER_UDP = "[ ID] Interval       Transfer     Bandwidth        Jitter   Lost/Total Datagrams";
export const HEADER_UDP_ENHANCED =
  "[ ID] Interval            Transfer     Bandwidth        Jitter   Lost/Total  Latency avg/min/max/stdev PPS  Rx/inP  NetPwr";
/** An --isochronous --trip-times client's flow, as 2.1.8 heads it. */
export const HEADER_UDP_ISOCH =
  "[ ID] Interval            Transfer     Bandwidth        Jitter   Lost/Total Latency avg/min/max/stdev  PPS  Frame:rx/lost  latency  NetPwr";
export const HEADER_TCP_WRITE_ENHANCED = "[ ID] Interval            Transfer    Bandwidth       Write/Err  Rtry     Cwnd/RTT(var)        NetPwr";
export const HEADER_TCP_WRITE_ISOCH = "[ ID] Interval            Transfer     Bandwidth      Write/Err  Rtry     Cwnd/RTT     isoch:tx/miss/slip  NetPwr";
/** --tcp-write-times / --histograms: 2.1.8 drops the RTT variance and adds the write times. */
export const HEADER_TCP_WRITE_TIMES = "[ ID] Interval            Transfer    Bandwidth       Write/Err  Rtry     Cwnd/RTT        NetPwr  write-times avg/min/max/stdev (cnt)";
export const HEADER_TCP_READ_ENHANCED = "[ ID] Interval            Transfer    Bandwidth       Reads=Dist";
export const HEADER_TCP_READ_TRIP_TIMES =
  "[ ID] Interval            Transfer    Bandwidth    Burst Latency avg/min/max/stdev (cnt/size) inP NetPwr  Reads=Dist";
export const HEADER_UDP_WRITE_ENHANCED = "[ ID] Interval            Transfer     Bandwidth      Write/Err  PPS";
export const HEADER_UDP_WRITE_ISOCH = `${HEADER_UDP_WRITE_ENHANCED}  isoch:tx/miss/slip`;

export interface Endpoint {
  host: string;
  port: number;
}

/** "[  1]", "[ *1]" (a stream the peer asked for: -R, -d, -r back-traffic), "[SUM]", "[SUM-2]". */
export function idTag(id: string | number): string {
  const s = String(id);
  return s.startsWith("SUM") ? `[${s}]` : `[${s.padStart(3)}]`;
}

export function intervalText(start: number, end: number): string {
  return `${formatFixed(start, 4)}-${formatFixed(end, 4)} sec`;
}

/** "1.38 MBytes  11.5 Mbits/sec": transfer in the upper-case form of -f, bandwidth in -f itself. */
export function transferAndRate(bytes: number, seconds: number, format: FormatLetter): string {
  // Over no time iperf 2 prints "-nan bits/sec", not the formula's 0.
  const rate = seconds > 0 ? bytesPerSecond(bytes, seconds) : Number.NaN;
  const bw = Number.isNaN(rate) ? "-nan bit" : formatUnits(rate, format);
  return `${formatUnits(bytes, format.toUpperCase() as FormatLetter)}s  ${bw}s/sec`;
}

export interface BwFigures {
  id: string | number;
  start: number;
  end: number;
  bytes: number;
}

export function bwLine(f: BwFigures, format: FormatLetter): string {
  return `${idTag(f.id)} ${intervalText(f.start, f.end)}  ${transferAndRate(f.bytes, f.end - f.start, format)}`;
}

export interface UdpFigures extends BwFigures {
  jitterS: number;
  lost: number;
  /** Datagrams the sender sent (FIN included), the denominator of the loss figure. */
  total: number;
}

export function lossText(lost: number, total: number): string {
  // "0/0 (-nan%)" as iperf 2 prints it, where the formula says 0.
  return `${lost}/${total} (${formatG2(total > 0 ? lossPercent(lost, total) : Number.NaN)}%)`;
}

/** Receiver side of UDP (server, -R client, the client's "Server Report"). */
export function udpLine(f: UdpFigures, format: FormatLetter): string {
  return `${bwLine(f, format)}  ${formatFixed(f.jitterS * 1000, 3, 6)} ms ${lossText(f.lost, f.total)}`;
}

export interface UdpLatency {
  meanS: number;
  minS: number;
  maxS: number;
  stdevS: number;
  pps: number;
}

/**
 * The NetPwr column: "NAN" without a delay, "OBL" far below zero (clock trouble), else more decimals the smaller the
 * figure (0 above 100, 2 above 10, 6 below).
 */
export function netPowerText(value: number): string {
  if (Number.isNaN(value)) return "NAN";
  if (value < -1e7) return "OBL";
  return formatFixed(value, value > 100 ? 0 : value > 10 ? 2 : 6);
}

const ms = (s: number) => formatFixed(s * 1000, 3);

/** What every -e receiver line starts with: figures, jitter, loss, latency avg/min/max/stdev in ms, PPS. */
function udpEnhancedHead(f: UdpFigures, l: UdpLatency, format: FormatLetter): string {
  return (
    `${idTag(f.id)} ${intervalText(f.start, f.end)}  ${transferAndRate(f.bytes, f.end - f.start, format)}  ` +
    `${formatFixed(f.jitterS * 1000, 3, 6)} ms ${lossText(f.lost, f.total)} ` +
    `${ms(l.meanS)}/${ms(l.minS)}/${ms(l.maxS)}/${ms(l.stdevS)} ms ${Math.round(l.pps)} pps`
  );
}

/** -e receiver columns: the head, Rx/inP (no in-progress estimate here: 0(0)), NetPwr. */
export function udpEnhancedLine(f: UdpFigures, l: UdpLatency, packets: number, format: FormatLetter): string {
  return `${udpEnhancedHead(f, l, format)} ${packets}/0(0) pkts ${netPowerText(iperf2NetPower(f.bytes, f.end - f.start, l.meanS))}`;
}

/**
 * An --isochronous --trip-times client's flow (2.1.8's udp_output_read_triptime_isoch): the head, then frames
 * received/lost and the frame latency avg/min/max/stdev in ms, NetPwr over the datagrams' latency.
 */
export function udpIsochLine(f: UdpFigures, l: UdpLatency, frames: FrameFigures, format: FormatLetter): string {
  const fl = frames.latency;
  const stdev = sampleStdev(fl.count, fl.sum, fl.sumSq);
  return (
    `${udpEnhancedHead(f, l, format)}  ${String(frames.frames).padStart(3)}/${frames.lost}  ` +
    `${ms(fl.mean)}/${ms(fl.min)}/${ms(fl.max)}/${ms(stdev)} ms ${netPowerText(iperf2NetPower(f.bytes, f.end - f.start, l.meanS))}`
  );
}

/** Server-side UDP sum over -P flows: no jitter column. */
export function udpSumLine(f: Omit<UdpFigures, "jitterS">, format: FormatLetter): string {
  return `${bwLine(f, format)}   ${lossText(f.lost, f.total)}`;
}

/**
 * -e sender columns for TCP: writes/errors, retransmits, cwnd/RTT(var) and NetPwr from TCP_INFO. Without a cwnd
 * (TCP_INFO unreadable) iperf prints "NA/<rtt> us" in its place.
 */
/** `writeTimes` (--tcp-write-times): the RTT without its variance, then the window's write times. */
export function tcpWriteEnhancedLine(f: BwFigures, writes: number, errors: number, tcp: TcpWriteStats, format: FormatLetter, writeTimes?: { latency: TimedLatency | undefined }): string {
  const seconds = f.end - f.start;
  const power = netPowerText(iperf2NetPower(f.bytes, seconds, tcp.rttUs * 1e-6));
  const rtt = writeTimes ? `${tcp.rttUs}` : `${tcp.rttUs}(${tcp.rttVarUs})`;
  const window = tcp.cwndK === null ? `      NA/${tcp.rttUs} us` : `${String(tcp.cwndK).padStart(8)}K/${rtt} us`;
  const line = `${idTag(f.id)} ${intervalText(f.start, f.end)}  ${transferAndRate(f.bytes, seconds, format)}  ${writes}/${errors} ${String(tcp.retry).padStart(10)} ${window}  ${power}`;
  return writeTimes ? `${line}  ${writeTimesText(writeTimes.latency)}` : line;
}

/**
 * An --isochronous TCP sender's -e line (2.1.8): writes/errors, retransmits, cwnd/RTT (no variance), frames
 * sent/missed/slips, NetPwr over the RTT.
 */
export function tcpWriteIsochLine(f: BwFigures, writes: number, errors: number, tcp: TcpWriteStats, frames: SentFrames, format: FormatLetter): string {
  const seconds = f.end - f.start;
  const head = `${idTag(f.id)} ${intervalText(f.start, f.end)}  ${transferAndRate(f.bytes, seconds, format)}  ${writes}/${errors}`;
  const tx = `${String(frames.sent).padStart(9)}/${frames.missed}/${frames.slips}`;
  if (tcp.cwndK === null) return `${head} ${String(tcp.retry).padStart(10)}    NA/${tcp.rttUs} us  ${tx} ${netPowerText(iperf2NetPower(f.bytes, seconds, tcp.rttUs * 1e-6))}`;
  return `${head} ${String(tcp.retry).padStart(8)} ${String(tcp.cwndK).padStart(8)}K/${tcp.rttUs} us  ${tx}        ${netPowerText(iperf2NetPower(f.bytes, seconds, tcp.rttUs * 1e-6))}`;
}

/** -e sum over senders: writes/errors and retransmits only. */
export function tcpWriteEnhancedSumLine(f: Omit<BwFigures, "id">, writes: number, errors: number, retry: number, format: FormatLetter): string {
  return `${idTag("SUM")} ${intervalText(f.start, f.end)}  ${transferAndRate(f.bytes, f.end - f.start, format)}  ${writes}/${errors}${String(retry).padStart(10)}`;
}

/** The connection line's TCP part: "(icwnd/mss/irtt=319/32741/28)". */
export function tcpInitNote(i: TcpInit): string {
  return `(icwnd/mss/irtt=${i.cwndK}/${i.mss}/${i.rttUs})`;
}

/**
 * A --trip-times client's TCP stream as the server reads it: the bursts' write-to-read latency avg/min/max/stdev in
 * ms, how many bursts arrived whole and their mean size, the bytes in progress (inP) and NetPwr over the mean
 * latency, then the read count. An interval with fewer than two bursts prints 0 for min, max and stdev, as stock does.
 */
export function tcpReadTripTimesLine(f: BwFigures, l: TimedLatency | undefined, reads: number, final: boolean, format: FormatLetter): string {
  const seconds = f.end - f.start;
  const n = l?.count ?? 0;
  const meanS = n > 0 ? l!.meanUs / 1e6 : 0;
  const ms = (us: number | undefined) => formatFixed((us ?? 0) / 1000, 3);
  const spread = final || n >= 2;
  const latency = `${ms(l?.meanUs)}/${ms(spread ? l?.minUs : 0)}/${ms(spread ? l?.maxUs : 0)}/${ms(l?.stdevUs)} ms (${n}/${Math.trunc(bytesPerCompletion(f.bytes, n))})`;
  const inP = formatUnits(iperf2InProgressBytes(f.bytes, seconds, meanS), "A");
  return `${bwLine(f, format)}  ${latency} ${inP} ${netPowerText(iperf2NetPower(f.bytes, seconds, meanS))}  ${reads}`;
}

/** -e receiver columns for TCP: the read count (the size distribution is not measured here). */
export function tcpReadEnhancedLine(f: BwFigures, reads: number, format: FormatLetter): string {
  return `${idTag(f.id)} ${intervalText(f.start, f.end)}  ${transferAndRate(f.bytes, f.end - f.start, format)}  ${reads}`;
}

/** -e sender columns for UDP: datagrams written/errors and the packet rate. */
export function udpWriteEnhancedLine(f: BwFigures, writes: number, errors: number, pps: number, format: FormatLetter, frames?: SentFrames): string {
  const line = `${idTag(f.id)} ${intervalText(f.start, f.end)}  ${transferAndRate(f.bytes, f.end - f.start, format)}  ${writes}/${errors} ${formatFixed(pps, 0, 8)} pps`;
  return frames ? `${line}  ${String(frames.sent).padStart(3)}/${frames.missed}/${frames.slips}` : line;
}

/** An --isochronous sender's "isoch:tx/miss/slip": frames sent, frame slots missed, and the times it fell behind. */
export interface SentFrames {
  sent: number;
  missed: number;
  slips: number;
}

export function sentLine(id: string | number, datagrams: number): string {
  return `${idTag(id)} Sent ${datagrams} datagrams`;
}

export function serverReportLine(id: string | number): string {
  return `${idTag(id)} Server Report:`;
}

function bufferText(bytes: number): string {
  return formatUnits(bytes, "A");
}

export interface BannerOptions {
  udp: boolean;
  port: number;
  /** Socket buffer the kernel gave us, bytes. */
  buffer: number;
  /** -w was given: say "(requested ...)" instead of "(default)". */
  requested?: number;
  enhanced?: boolean;
  pid?: number;
  /** -e clients say "TOS set to 0x0 (Nagle on)". */
  tos?: number;
  noDelay?: boolean;
}

export function bufferLine(o: Pick<BannerOptions, "udp" | "buffer" | "requested">): string {
  const what = o.udp ? "UDP buffer size" : "TCP window size";
  const note = o.requested ? `(WARNING: requested ${bufferText(o.requested)})` : "(default)";
  if (o.requested && o.requested === o.buffer) return `${what}: ${bufferText(o.buffer)}`;
  return `${what}: ${bufferText(o.buffer)} ${note}`;
}

export function serverBanner(o: BannerOptions & { readLen?: number }): string[] {
  const lines = [RULE, `Server listening on ${o.udp ? "UDP" : "TCP"} port ${o.port}${o.enhanced && o.pid ? ` with pid ${o.pid}` : ""}`];
  // Reads are binned by size in eight bins for -e (iperf's read histogram, "Reads=Dist").
  if (o.enhanced && o.readLen) lines.push(`Read buffer size: ${bufferText(o.readLen)} (Dist bin width=${bufferText(Math.floor(o.readLen / 8))})`);
  lines.push(bufferLine(o), RULE);
  return lines;
}

export function clientBanner(
  o: BannerOptions & {
    host: string;
    datagramSize?: number;
    rateBps?: number | null;
    pps?: number | null;
    writeLen?: number;
    flows?: number;
    /** --tcp-write-times: "(writetimer-enabled)" after the write size. */
    writeTimer?: boolean;
    /** Lines after the buffer size, before the closing rule (--histograms' "Enabled write histograms ..."). */
    extra?: string[];
    /** --isochronous: its line in place of the datagram size and gap. */
    isochronous?: IsochronousSettings;
  },
): string[] {
  const lines = [RULE, `Client connecting to ${o.host}, ${o.udp ? "UDP" : "TCP"} port ${o.port}${o.enhanced && o.pid ? ` with pid ${o.pid} (${o.flows ?? 1} flows)` : ""}`];
  if (o.enhanced && !o.udp && o.writeLen) lines.push(`Write buffer size: ${o.writeLen} Byte${o.writeTimer ? " (writetimer-enabled)" : ""}`);
  if (o.isochronous) lines.push(isochronousLine(o.isochronous));
  if (o.enhanced) {
    const tos = `TOS set to 0x${(o.tos ?? 0).toString(16)}`;
    lines.push(o.noDelay ? `${tos} and nodelay (Nagle off)` : `${tos} (Nagle on)`);
  }
  if (o.udp && o.datagramSize && !o.isochronous) {
    const ipg = interPacketGapUs(o.pps ? o.pps : packetsPerSecondAt(o.rateBps ?? 0, o.datagramSize));
    lines.push(`Sending ${o.datagramSize} byte datagrams, IPG target: ${formatFixed(ipg, 2)} us (kalman adjust)`);
  }
  lines.push(bufferLine(o), ...(o.extra ?? []), RULE);
  return lines;
}

export interface IsochronousSettings {
  perSecond: number;
  meanBps: number;
  stddevBps: number;
  ipgMs: number;
}

/**
 * "Isochronous: 60.00 frames/sec mean=20.0 Mbit/s, stddev=0.000 bit/s, Period/IPG=16.67/0.000 ms": the period and
 * the gap are whole microseconds, as stock keeps them (formatUnits takes bytes).
 */
export function isochronousLine(o: IsochronousSettings): string {
  const periodMs = Math.floor(1e6 / o.perSecond) / 1000;
  const ipgMs = Math.floor(o.ipgMs * 1000) / 1000;
  return `Isochronous: ${formatFixed(o.perSecond, 2)} frames/sec mean=${formatUnits(o.meanBps / 8, "a")}/s, stddev=${formatUnits(o.stddevBps / 8, "a")}/s, Period/IPG=${formatFixed(periodMs, 2)}/${formatFixed(ipgMs, 3)} ms`;
}

/** "[  1] local 127.0.0.1 port 41814 connected with 127.0.0.1 port 27001 (reverse)". */
export function connectionLine(id: string | number, local: Endpoint, peer: Endpoint, notes: string[] = []): string {
  const tail = notes.length ? ` ${notes.join(" ")}` : "";
  return `${idTag(id)} local ${local.host} port ${local.port} connected with ${peer.host} port ${peer.port}${tail}`;
}

/**
 * The line under "Server Report:", from the report datagram alone: the -e columns when the server flagged its
 * latency words, the plain jitter/loss line otherwise; `null` (a reply too short to decode) prints zeros like stock.
 */
export function reportedLine(id: string | number, report: ServerReport | null, format: FormatLetter): { heading: string; text: string } {
  const r = report ?? { flags: 0, totalBytes: 0, duration: 0, lost: 0, outOfOrder: 0, datagrams: 0, jitter: 0 };
  const fig = { id, start: 0, end: r.duration, bytes: r.totalBytes, jitterS: r.jitter, lost: r.lost, total: r.datagrams };
  if (report && latencyValid(report) && report.latency) {
    const l = report.latency;
    const n = l.transitCount;
    const latency = {
      // Stock takes the mean from the sum, and the deviation from M2 in microseconds squared.
      meanS: n > 0 ? l.sumTransit / n : 0,
      minS: l.minTransit,
      maxS: l.maxTransit,
      stdevS: n > 1 ? Math.sqrt(l.m2Transit / (n - 1)) / 1e6 : 0,
      pps: packetsPerSecond(l.ppsPackets, l.ppsSeconds),
    };
    return { heading: HEADER_UDP_ENHANCED, text: udpEnhancedLine(fig, latency, l.ppsPackets, format) };
  }
  return { heading: HEADER_UDP, text: udpLine(fig, format) };
}
