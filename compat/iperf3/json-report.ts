/**
 * iperf3 3.12's -J document (docs/protocols/iperf3.md §11) and iperf3 3.17's --json-stream events, with the keys, their
 * order and the number printing of the stock tool (cJSON), so parsers of iperf3 JSON read ours unchanged.
 */
import { Entries, printCompact, printFormatted, type CValue } from "../../interop/iperf3/cjson.ts";
import { lossPercent, throughputBps } from "../../src/formulas.ts";
import { summaryTimes } from "./summary-times.ts";
import { intervalSums, summarySums } from "./report-sums.ts";
import type { ReportStream, ReportTest } from "./report-model.ts";

type Obj = Array<readonly [string, CValue]>;
const obj = (e: Obj) => new Entries(e);

export interface ConnectedInfo {
  socket: number;
  localHost: string;
  localPort: number;
  remoteHost: string;
  remotePort: number;
}

export interface SockBufInfo {
  sockBufsize: number;
  sndbufActual: number;
  rcvbufActual: number;
}

export interface TestStartInfo {
  protocol: "TCP" | "UDP";
  numStreams: number;
  blksize: number;
  omit: number;
  duration: number;
  bytes: number;
  blocks: number;
  reverse: boolean;
  tos: number;
  targetBitrate: number;
}

/** What the "start" object is made of; parts are absent until known (a failed test prints what it had). */
export interface StartInfo {
  role: "client" | "server";
  connected: ConnectedInfo[];
  version: string;
  systemInfo: string;
  timestamp?: Date;
  connectingTo?: { host: string; port: number };
  acceptedConnection?: { host: string; port: number };
  cookie?: string;
  /** TCP only: the MSS asked for with -M, or the control connection's. */
  tcpMss?: { explicit: boolean; value: number };
  targetBitrate?: number;
  /** One entry per data stream (3.12 repeats these keys). */
  sockBufs: SockBufInfo[];
  testStart?: TestStartInfo;
}

export function jsonStart(s: StartInfo): Entries {
  const e: Obj = [];
  e.push(["connected", s.connected.map((c) => obj([["socket", c.socket], ["local_host", c.localHost], ["local_port", c.localPort], ["remote_host", c.remoteHost], ["remote_port", c.remotePort]]))]);
  e.push(["version", s.version], ["system_info", s.systemInfo]);
  const bufs = () => {
    for (const b of s.sockBufs) e.push(["sock_bufsize", b.sockBufsize], ["sndbuf_actual", b.sndbufActual], ["rcvbuf_actual", b.rcvbufActual]);
  };
  const stamp = () => {
    if (s.timestamp) e.push(["timestamp", obj([["time", s.timestamp.toUTCString()], ["timesecs", Math.floor(s.timestamp.getTime() / 1000)]])]);
  };
  const mss = () => {
    if (s.tcpMss) e.push([s.tcpMss.explicit ? "tcp_mss" : "tcp_mss_default", s.tcpMss.value]);
  };
  if (s.role === "client") {
    stamp();
    if (s.connectingTo) e.push(["connecting_to", obj([["host", s.connectingTo.host], ["port", s.connectingTo.port]])]);
    if (s.cookie !== undefined) e.push(["cookie", s.cookie]);
    mss();
    if (s.targetBitrate !== undefined) e.push(["target_bitrate", s.targetBitrate]);
    bufs();
  } else {
    // The server learns the rate from the parameters, then creates the streams, then reports the connection.
    if (s.targetBitrate) e.push(["target_bitrate", s.targetBitrate]);
    bufs();
    stamp();
    if (s.acceptedConnection) e.push(["accepted_connection", obj([["host", s.acceptedConnection.host], ["port", s.acceptedConnection.port]])]);
    if (s.cookie !== undefined) e.push(["cookie", s.cookie]);
    mss();
    if (s.targetBitrate !== undefined) e.push(["target_bitrate", s.targetBitrate]);
  }
  if (s.testStart) {
    const t = s.testStart;
    e.push([
      "test_start",
      obj([
        ["protocol", t.protocol], ["num_streams", t.numStreams], ["blksize", t.blksize], ["omit", t.omit], ["duration", t.duration],
        ["bytes", t.bytes], ["blocks", t.blocks], ["reverse", t.reverse ? 1 : 0], ["tos", t.tos], ["target_bitrate", t.targetBitrate],
      ]),
    ]);
  }
  return obj(e);
}

/** The names that go with the server-to-client direction of a bidir test. */
function reverseSuffix(t: ReportTest, mustSend: boolean): string {
  if (t.mode !== "bidir") return "";
  return (t.role === "client" && !mustSend) || (t.role === "server" && mustSend) ? "_bidir_reverse" : "";
}

/** Interval `k` as an element of "intervals", or undefined when iperf3 would drop it (short, no data). */
export function jsonInterval(t: ReportTest, k: number): Entries | undefined {
  const directions = intervalSums(t, k);
  if (!directions) return undefined;
  const streams: Entries[] = [];
  const sums: Obj = [];
  const first = t.streams[0]!.intervals[k]!;
  for (const d of directions) {
    for (const { stream: s, interval: i } of d.streams) {
      const e: Obj = [["socket", s.socket], ["start", i.startS], ["end", i.endS], ["seconds", i.durationS], ["bytes", i.bytes], ["bits_per_second", throughputBps(i.bytes, i.durationS)]];
      if (t.protocol === "tcp") {
        if (t.senderHasRetransmits === 1 && s.sender) {
          e.push(["retransmits", i.retransmits], ["snd_cwnd", i.sndCwnd], ["snd_wnd", i.sndWnd], ["rtt", i.rttUs], ["rttvar", i.rttvarUs], ["pmtu", i.pmtu]);
        }
      } else if (s.sender) {
        e.push(["packets", i.packets]);
      } else {
        e.push(["jitter_ms", i.jitterS * 1000], ["lost_packets", i.lost], ["packets", i.packets], ["lost_percent", lossPercent(i.lost, i.packets)]);
      }
      e.push(["omitted", i.omitted], ["sender", s.sender]);
      streams.push(obj(e));
    }
    const e: Obj = [["start", first.startS], ["end", first.endS], ["seconds", first.durationS], ["bytes", d.bytes], ["bits_per_second", throughputBps(d.bytes, first.durationS)]];
    if (t.protocol === "tcp") {
      if (t.senderHasRetransmits === 1 && d.mustSend) e.push(["retransmits", d.retransmits]);
    } else if (d.mustSend) {
      e.push(["packets", d.packets]);
    } else {
      e.push(["jitter_ms", (d.jitterS / t.numStreams) * 1000], ["lost_packets", d.lost], ["packets", d.packets], ["lost_percent", lossPercent(d.lost, d.packets)]);
    }
    e.push(["omitted", first.omitted], ["sender", d.mustSend]);
    sums.push([`sum${reverseSuffix(t, d.mustSend)}`, obj(e)]);
  }
  return obj([["streams", streams], ...sums]);
}

export function jsonEnd(t: ReportTest): Entries {
  const { senderTimeS, receiverTimeS, endTimeS } = summaryTimes(t.streams[0]);
  const streams: Entries[] = [];
  const tail: Obj = [];
  const directions = summarySums(t);
  for (const d of directions) {
    const { mustSend } = d;
    const shr = d.hasRetransmits;
    for (const { stream: s, senderPackets, packets, lost, outOfOrder } of d.streams) {
      if (t.protocol === "tcp") {
        streams.push(tcpStreamEnd(s, shr !== 0, mustSend, senderTimeS, receiverTimeS, endTimeS));
      } else {
        streams.push(
          obj([
            [
              "udp",
              obj([
                ["socket", s.socket], ["start", 0], ["end", senderTimeS], ["seconds", senderTimeS], ["bytes", s.bytesSent],
                ["bits_per_second", throughputBps(s.bytesSent, senderTimeS)], ["jitter_ms", s.jitterS * 1000], ["lost_packets", lost],
                ["packets", packets], ["lost_percent", lossPercent(lost, senderPackets)],
                ["out_of_order", outOfOrder], ["sender", mustSend],
              ]),
            ],
          ]),
        );
      }
    }
    const sfx = reverseSuffix(t, mustSend);
    if (t.protocol === "tcp") {
      const sent: Obj = [["start", 0], ["end", senderTimeS], ["seconds", senderTimeS], ["bytes", d.sent], ["bits_per_second", throughputBps(d.sent, senderTimeS)]];
      if (shr) sent.push(["retransmits", d.retransmits]);
      sent.push(["sender", mustSend]);
      tail.push([`sum_sent${sfx}`, obj(sent)]);
      tail.push([`sum_received${sfx}`, obj([["start", 0], ["end", receiverTimeS], ["seconds", receiverTimeS], ["bytes", d.received], ["bits_per_second", throughputBps(d.received, receiverTimeS)], ["sender", mustSend]])]);
    } else {
      const avgJitterMs = (d.jitterS / t.numStreams) * 1000;
      tail.push([
        `sum${sfx}`,
        obj([
          ["start", 0], ["end", receiverTimeS], ["seconds", receiverTimeS], ["bytes", d.sent], ["bits_per_second", throughputBps(d.sent, senderTimeS)],
          ["jitter_ms", avgJitterMs], ["lost_packets", d.lost], ["packets", d.packets], ["lost_percent", lossPercent(d.lost, d.packets)], ["sender", mustSend],
        ]),
      ]);
      tail.push([
        `sum_sent${sfx}`,
        obj([
          ["start", 0], ["end", senderTimeS], ["seconds", senderTimeS], ["bytes", d.sent], ["bits_per_second", throughputBps(d.sent, senderTimeS)],
          ["jitter_ms", 0], ["lost_packets", 0], ["packets", d.senderPackets], ["lost_percent", 0], ["sender", true],
        ]),
      ]);
      tail.push([
        `sum_received${sfx}`,
        obj([
          ["start", 0], ["end", receiverTimeS], ["seconds", receiverTimeS], ["bytes", d.received], ["bits_per_second", throughputBps(d.received, receiverTimeS)],
          ["jitter_ms", avgJitterMs], ["lost_packets", d.lost], ["packets", d.receiverPackets], ["lost_percent", lossPercent(d.lost, d.packets)], ["sender", false],
        ]),
      ]);
    }
  }
  const last = directions[directions.length - 1]!.mustSend;
  tail.push([
    "cpu_utilization_percent",
    obj([["host_total", t.cpu[0]], ["host_user", t.cpu[1]], ["host_system", t.cpu[2]], ["remote_total", t.remoteCpu[0]], ["remote_user", t.remoteCpu[1]], ["remote_system", t.remoteCpu[2]]]),
  ]);
  if (t.protocol === "tcp") {
    const snd = last ? t.congestionUsed : t.remoteCongestionUsed;
    const rcv = last ? t.remoteCongestionUsed : t.congestionUsed;
    if (snd) tail.push(["sender_tcp_congestion", snd]);
    if (rcv) tail.push(["receiver_tcp_congestion", rcv]);
  }
  return obj([["streams", streams], ...tail]);
}

function tcpStreamEnd(s: ReportStream, shr: boolean, mustSend: boolean, senderTimeS: number, receiverTimeS: number, endTimeS: number): Entries {
  const sender: Obj = [["socket", s.socket], ["start", 0], ["end", senderTimeS], ["seconds", senderTimeS], ["bytes", s.bytesSent], ["bits_per_second", throughputBps(s.bytesSent, senderTimeS)]];
  if (shr) {
    sender.push(["retransmits", s.retransmits], ["max_snd_cwnd", s.maxSndCwnd], ["max_snd_wnd", s.maxSndWnd], ["max_rtt", s.maxRttUs], ["min_rtt", s.minRttUs], ["mean_rtt", s.meanRttUs]);
  }
  sender.push(["sender", mustSend]);
  const receiver: Obj = [["socket", s.socket], ["start", 0], ["end", receiverTimeS], ["seconds", endTimeS], ["bytes", s.bytesReceived], ["bits_per_second", throughputBps(s.bytesReceived, receiverTimeS)], ["sender", mustSend]];
  return obj([["sender", obj(sender)], ["receiver", obj(receiver)]]);
}

export interface JsonDocument {
  start: Entries;
  intervals: Entries[];
  end: Entries;
  title?: string;
  extraData?: string;
  serverOutputJson?: Record<string, unknown>;
  serverOutputText?: string;
  error?: string;
}

function top(d: JsonDocument): Entries {
  const e: Obj = [["start", d.start], ["intervals", d.intervals], ["end", d.end]];
  if (d.title !== undefined) e.push(["title", d.title]);
  if (d.extraData !== undefined) e.push(["extra_data", d.extraData]);
  if (d.serverOutputJson !== undefined) e.push(["server_output_json", d.serverOutputJson as CValue]);
  if (d.serverOutputText !== undefined) e.push(["server_output_text", d.serverOutputText]);
  if (d.error !== undefined) e.push(["error", d.error]);
  return obj(e);
}

/** The -J output: one tab-indented document and a newline. */
export function jsonDocumentText(d: JsonDocument): string {
  return `${printFormatted(top(d))}\n`;
}

/** The document as a value (the server's --get-server-output with -J carries it inside its results). */
export function jsonDocumentValue(d: JsonDocument): Record<string, unknown> {
  return JSON.parse(printCompact(top(d))) as Record<string, unknown>;
}

/** One --json-stream line: {"event":NAME,"data":...}. */
export function jsonStreamLine(event: "start" | "interval" | "end" | "error" | "server_output_json" | "server_output_text", data: CValue): string {
  return `${printCompact(obj([["event", event], ["data", data]]))}\n`;
}
