/**
 * iperf3 3.12's human-readable report, line for line: the connection lines, each interval block
 * (iperf_print_intermediate) and the summary (iperf_print_results), for the client and the server side.
 * Printf widths come from iperf_locale.c; %f goes through formatFixed (glibc rounding), sizes through formatIperf.
 */
import { formatFixed, formatIperf } from "../../src/units.ts";
import { formatG, printFormatted, type CValue } from "../../interop/iperf3/cjson.ts";
import { bytesPerSecond, lossPercent } from "../../src/formulas.ts";
import { summaryTimes } from "./summary-times.ts";
import { intervalSums, summarySums } from "./report-sums.ts";
import type { ReportStream, ReportTest } from "./report-model.ts";

export const SEPARATOR_LINE = "-----------------------------------------------------------\n";
const BW_SEPARATOR = "- - - - - - - - - - - - - - - - - - - - - - - - -\n";
const OMITTED = "(omitted)";

const HEADERS = {
  bw: "[ ID] Interval           Transfer     Bitrate\n",
  bwBidir: "[ ID][Role] Interval           Transfer     Bitrate\n",
  retrans: "[ ID] Interval           Transfer     Bitrate         Retr\n",
  retransBidir: "[ ID][Role] Interval           Transfer     Bitrate         Retr\n",
  retransCwnd: "[ ID] Interval           Transfer     Bitrate         Retr  Cwnd\n",
  retransCwndBidir: "[ ID][Role] Interval           Transfer     Bitrate         Retr  Cwnd\n",
  udp: "[ ID] Interval           Transfer     Bitrate         Jitter    Lost/Total Datagrams\n",
  udpBidir: "[ ID][Role] Interval           Transfer     Bitrate         Jitter    Lost/Total Datagrams\n",
  udpSender: "[ ID] Interval           Transfer     Bitrate         Total Datagrams\n",
};

const f62 = (v: number) => formatFixed(v, 2, 6);
const fl62 = (v: number) => formatFixed(v, 2).padEnd(6);
const d3 = (v: number) => String(Math.trunc(v)).padStart(3);
/** Transfer column: adaptive bytes. */
const xfer = (bytes: number) => `${formatIperf(bytes, "A")}s`;
/** Bitrate column: bytes/s in the -f unit. */
const rate = (t: ReportTest, bytesPerS: number) => `${formatIperf(bytesPerS, t.unitFormat)}s/sec`;
/** C's "%.2g%%". */
const pct = (v: number) => `${formatG(v, 2)}%`;

function roleTag(t: ReportTest, sender: boolean): string {
  return t.mode === "bidir" ? `[${sender ? "TX" : "RX"}-${t.role === "client" ? "C" : "S"}]` : "";
}

export function connectingLines(host: string, port: number, reverse: boolean): string {
  return `Connecting to host ${host}, port ${port}\n${reverse ? `Reverse mode, remote host ${host} is sending\n` : ""}`;
}

export function connectedLine(s: Pick<ReportStream, "socket" | "localHost" | "localPort" | "remoteHost" | "remotePort">): string {
  return `[${d3(s.socket)}] local ${s.localHost} port ${s.localPort} connected to ${s.remoteHost} port ${s.remotePort}\n`;
}

export function serverListening(port: number, testNumber: number): string {
  return `${SEPARATOR_LINE}Server listening on ${port} (test #${testNumber})\n${SEPARATOR_LINE}`;
}

export function acceptedLine(host: string, port: number): string {
  return `Accepted connection from ${host}, port ${port}\n`;
}

export const DONE = "\niperf Done.\n";

/** Interval `k` of every stream, or "" for a short trailing interval without data (iperf3 drops those too). */
export function intervalBlock(t: ReportTest, k: number): string {
  const directions = intervalSums(t, k);
  if (!directions) return "";
  const first = t.streams[0]!;
  let out = "";
  for (const d of directions) {
    for (const { stream } of d.streams) out += streamInterval(t, stream, k);
    if (t.numStreams <= 1) continue;
    const fi = first.intervals[k];
    if (!fi) continue;
    const head = `[SUM]${roleTag(t, d.mustSend)} ${f62(fi.startS)}-${fl62(fi.endS)} sec  ${xfer(d.bytes)}  ${rate(t, bytesPerSecond(d.bytes, fi.durationS))}`;
    const omitted = fi.omitted ? OMITTED : "";
    if (t.protocol === "tcp") {
      if (t.senderHasRetransmits === 1 && d.mustSend) out += `${head}  ${d3(d.retransmits)}             ${omitted}\n`;
      else out += `${head}                  ${omitted}\n`;
    } else if (d.mustSend) {
      out += `${head} ${t.mode === "bidir" ? "          " : ""} ${d.packets}  ${omitted}\n`;
    } else {
      out += `${head}  ${formatFixed((d.jitterS / t.numStreams) * 1000, 3, 5)} ms  ${d.lost}/${d.packets} (${pct(lossPercent(d.lost, d.packets))})  ${omitted}\n`;
    }
  }
  return out;
}

function streamInterval(t: ReportTest, s: ReportStream, k: number): string {
  const i = s.intervals[k]!;
  const bidir = t.mode === "bidir";
  let out = "";
  if (s === t.streams[0]) {
    if (k === 0) out += intervalHeader(t);
    else if (t.numStreams > 1) out += BW_SEPARATOR;
  }
  const head = `[${d3(s.socket)}]${roleTag(t, s.sender)} ${f62(i.startS)}-${fl62(i.endS)} sec  ${xfer(i.bytes)}  ${rate(t, bytesPerSecond(i.bytes, i.durationS))}`;
  const omitted = i.omitted ? OMITTED : "";
  if (t.protocol === "tcp") {
    if (t.senderHasRetransmits === 1 && s.sender) return `${out}${head}  ${d3(i.retransmits)}   ${xfer(i.sndCwnd)}       ${omitted}\n`;
    return `${out}${head}                  ${omitted}\n`;
  }
  if (s.sender) return `${out}${head} ${bidir ? "          " : ""} ${i.packets}  ${omitted}\n`;
  return `${out}${head}  ${formatFixed(i.jitterS * 1000, 3, 5)} ms  ${i.lost}/${i.packets} (${pct(lossPercent(i.lost, i.packets))})  ${omitted}\n`;
}

function intervalHeader(t: ReportTest): string {
  const bidir = t.mode === "bidir";
  if (t.protocol === "tcp") {
    if (t.senderHasRetransmits === 1) return bidir ? HEADERS.retransCwndBidir : HEADERS.retransCwnd;
    return bidir ? HEADERS.bwBidir : HEADERS.bw;
  }
  if (t.mode === "sender") return HEADERS.udpSender;
  return t.mode === "receiver" ? HEADERS.udp : HEADERS.udpBidir;
}

/** The closing summary (separator, header, sender/receiver lines, sums, verbose CPU lines, server output). */
export function summaryBlock(t: ReportTest): string {
  const bidir = t.mode === "bidir";
  const server = t.role === "server";
  let out = BW_SEPARATOR;
  if (t.verbose) out += "Test Complete. Summary Results:\n";
  if (t.protocol === "tcp") {
    if (t.senderHasRetransmits || t.otherSideHasRetransmits) out += bidir ? HEADERS.retransBidir : HEADERS.retrans;
    else out += bidir ? HEADERS.bwBidir : HEADERS.bw;
  } else out += bidir ? HEADERS.udpBidir : HEADERS.udp;

  const { senderTimeS, receiverTimeS, endTimeS } = summaryTimes(t.streams[0]);
  let serverOutputShown = false;
  for (const d of summarySums(t)) {
    const { mustSend } = d;
    const mbuf = roleTag(t, mustSend);
    const shr = d.hasRetransmits;
    for (const { stream: s, senderPackets, receiverPackets, lost, outOfOrder } of d.streams) {
      const sock = `[${d3(s.socket)}]${mbuf}`;
      const sendHead = `${sock} ${f62(0)}-${fl62(senderTimeS)} sec  ${xfer(s.bytesSent)}  ${rate(t, senderTimeS > 0 ? s.bytesSent / senderTimeS : 0)}`;
      const notAvailable = (what: string) => (t.verbose ? `[${d3(s.socket)}] (${what} statistics not available)\n` : "");
      if (t.protocol === "tcp") {
        if (server && !s.sender) out += notAvailable("sender");
        else if (shr) out += `${sendHead}  ${d3(s.retransmits)}             sender\n`;
        else out += `${sendHead}                  sender\n`;
      } else {
        if (server && !s.sender) out += notAvailable("sender");
        else out += `${sendHead}  ${formatFixed(0, 3, 5)} ms  0/${senderPackets} (${pct(0)})  sender\n`;
        if (outOfOrder > 0) out += `[SUM]${mbuf} ${formatFixed(0, 1, 4)}-${formatFixed(senderTimeS, 1, 4)} sec  ${outOfOrder} datagrams received out-of-order\n`;
      }
      const recvHead = `${sock} ${f62(0)}-${fl62(receiverTimeS)} sec  ${xfer(s.bytesReceived)}  ${rate(t, receiverTimeS > 0 ? s.bytesReceived / receiverTimeS : 0)}`;
      if (server && s.sender) out += notAvailable("receiver");
      else if (t.protocol === "tcp") out += `${recvHead}                  receiver\n`;
      else {
        out += `${recvHead}  ${formatFixed(s.jitterS * 1000, 3, 5)} ms  ${lost}/${receiverPackets} (${pct(lossPercent(lost, receiverPackets))})  receiver\n`;
      }
    }
    if (t.numStreams > 1) {
      const sumNa = (what: string) => (t.verbose ? `[SUM] (${what} statistics not available)\n` : "");
      const sentRate = rate(t, senderTimeS > 0 ? d.sent / senderTimeS : 0);
      const sendHead = `[SUM]${mbuf} ${f62(0)}-${fl62(senderTimeS)} sec  ${xfer(d.sent)}  ${sentRate}`;
      if (t.protocol === "tcp") {
        if (server && !mustSend) out += sumNa("sender");
        else if (shr) out += `${sendHead}  ${d3(d.retransmits)}             sender\n`;
        else out += `${sendHead}                  sender\n`;
        const recvHead = `[SUM]${mbuf} ${f62(0)}-${fl62(receiverTimeS)} sec  ${xfer(d.received)}  ${rate(t, receiverTimeS > 0 ? d.received / receiverTimeS : 0)}`;
        if (server && mustSend) out += sumNa("receiver");
        else out += `${recvHead}                  receiver\n`;
      } else {
        const avgJitter = d.jitterS / t.numStreams;
        if (!(server && !mustSend)) out += `${sendHead}  ${formatFixed(0, 3, 5)} ms  0/${d.senderPackets} (${pct(0)})  sender\n`;
        if (!(server && mustSend)) {
          const r = rate(t, endTimeS > 0 ? d.received / receiverTimeS : 0);
          out += `[SUM]${mbuf} ${f62(0)}-${fl62(receiverTimeS)} sec  ${xfer(d.received)}  ${r}  ${formatFixed(avgJitter * 1000, 3, 5)} ms  ${d.lost}/${d.receiverPackets} (${pct(lossPercent(d.lost, d.packets))})  receiver\n`;
        }
      }
    }
    if (t.verbose) {
      if (mustSend) {
        const cpuLine = (localSends: boolean) =>
          `CPU Utilization: local/${localSends ? "sender" : "receiver"} ${formatFixed(t.cpu[0], 1)}% (${formatFixed(t.cpu[1], 1)}%u/${formatFixed(t.cpu[2], 1)}%s), remote/${localSends ? "receiver" : "sender"} ${formatFixed(t.remoteCpu[0], 1)}% (${formatFixed(t.remoteCpu[1], 1)}%u/${formatFixed(t.remoteCpu[2], 1)}%s)\n`;
        out += cpuLine(true);
        if (bidir) out += cpuLine(false);
      }
      if (t.protocol === "tcp") {
        const snd = mustSend ? t.congestionUsed : t.remoteCongestionUsed;
        const rcv = mustSend ? t.remoteCongestionUsed : t.congestionUsed;
        if (snd) out += `snd_tcp_congestion ${snd}\n`;
        if (rcv) out += `rcv_tcp_congestion ${rcv}\n`;
      }
    }
    if (t.role === "client" && t.getServerOutput && !serverOutputShown) {
      serverOutputShown = true;
      if (t.serverOutputJson) out += `\nServer JSON output:\n${printFormatted(t.serverOutputJson as CValue)}\n`;
      if (t.serverOutputText !== undefined) out += `\nServer output:\n${t.serverOutputText}\n`;
    }
  }
  return out;
}
