import { describe, expect, test } from "bun:test";
import { jsonDocumentText, jsonEnd, jsonInterval, jsonStart, jsonStreamLine, type StartInfo } from "./json-report.ts";
import type { IntervalResult, Mode, ReportStream, ReportTest } from "./report-model.ts";
import { Entries, type CValue } from "../../interop/iperf3/cjson.ts";
import { readFixture } from "../../tests/fixtures/iperf3/capture.ts";
import { captureJson, parseOrdered } from "../../tests/fixtures/iperf3/ordered-json.ts";

/** Field access on parsed documents (first occurrence of a key). */
function get(v: CValue | undefined, ...path: Array<string | number>): CValue {
  let cur: CValue | undefined = v;
  for (const p of path) {
    if (typeof p === "number") cur = (cur as CValue[])[p];
    else cur = (cur as Entries).entries.find(([k]) => k === p)?.[1];
    if (cur === undefined) throw new Error(`no ${path.join(".")}`);
  }
  if (cur === undefined) throw new Error("no value");
  return cur;
}
const num = (v: CValue | undefined, ...p: Array<string | number>) => get(v, ...p) as number;
const has = (v: CValue, key: string) => (v as Entries).entries.some(([k]) => k === key);

/** The program output of an iperf3-out-* fixture (one side), or a client-json capture, as a document. */
function doc(name: string, side?: "client" | "server"): { text: string; value: CValue } {
  const raw = readFixture(name);
  let text: string;
  if (side) {
    const sec = raw.split(`### ${side}\n`)[1]!.split(/\n### /)[0]!;
    text = sec.split("\n").map((l) => l.replace(/^ {4}/, "")).filter((l) => !/^(client|server) rc=/.test(l)).join("\n").trimEnd();
  } else text = captureJson(raw);
  return { text, value: parseOrdered(text).value };
}

/**
 * Rebuilds our report model from a stock -J document: if our printer is right, printing the model gives the
 * document back byte for byte (figures recomputed from bytes and seconds, keys in order, numbers like cJSON).
 */
function modelFrom(d: CValue, role: "client" | "server", shrIntervals: number, shrEnd: number, otherEnd = 0): { intervals: ReportTest; end: ReportTest } {
  const start = get(d, "start");
  const ts = get(start, "test_start");
  const intervals = get(d, "intervals") as CValue[];
  const endStreams = get(d, "end", "streams") as CValue[];
  const udp = get(ts, "protocol") === "UDP";
  const numStreams = num(ts, "num_streams");
  const bySocket = new Map<number, ReportStream>();
  const order: ReportStream[] = [];
  for (const iv of intervals) {
    for (const s of get(iv, "streams") as CValue[]) {
      const socket = num(s, "socket");
      let st = bySocket.get(socket);
      if (!st) {
        st = blankStream(socket, get(s, "sender") as boolean);
        bySocket.set(socket, st);
        order.push(st);
      }
      const i: IntervalResult = {
        startS: num(s, "start"), endS: num(s, "end"), durationS: num(s, "seconds"), bytes: num(s, "bytes"), omitted: get(s, "omitted") as boolean,
        retransmits: has(s, "retransmits") ? num(s, "retransmits") : 0, sndCwnd: has(s, "snd_cwnd") ? num(s, "snd_cwnd") : 0,
        sndWnd: has(s, "snd_wnd") ? num(s, "snd_wnd") : 0, rttUs: has(s, "rtt") ? num(s, "rtt") : 0, rttvarUs: has(s, "rttvar") ? num(s, "rttvar") : 0,
        pmtu: has(s, "pmtu") ? num(s, "pmtu") : 0, packets: has(s, "packets") ? num(s, "packets") : 0,
        lost: has(s, "lost_packets") ? num(s, "lost_packets") : 0, outOfOrder: 0, jitterS: has(s, "jitter_ms") ? num(s, "jitter_ms") / 1000 : 0,
      };
      st.intervals.push(i);
    }
  }
  for (const e of endStreams) {
    if (udp) {
      const u = get(e, "udp");
      const st = bySocket.get(num(u, "socket"))!;
      st.bytesSent = num(u, "bytes");
      st.cntError = num(u, "lost_packets");
      st.outOfOrder = num(u, "out_of_order");
      st.jitterS = num(u, "jitter_ms") / 1000;
      st.packetCount = st.peerPacketCount = num(u, "packets");
      st.endTimeS = num(u, "end");
    } else {
      const snd = get(e, "sender");
      const rcv = get(e, "receiver");
      const st = bySocket.get(num(snd, "socket"))!;
      st.bytesSent = num(snd, "bytes");
      st.bytesReceived = num(rcv, "bytes");
      if (has(snd, "retransmits")) {
        st.retransmits = num(snd, "retransmits");
        st.maxSndCwnd = num(snd, "max_snd_cwnd");
        st.maxSndWnd = num(snd, "max_snd_wnd");
        st.maxRttUs = num(snd, "max_rtt");
        st.minRttUs = num(snd, "min_rtt");
        st.meanRttUs = num(snd, "mean_rtt");
      }
      st.endTimeS = st.sender ? num(snd, "end") : num(rcv, "end");
      st.peerTimeS = st.sender ? num(rcv, "end") : num(snd, "end");
    }
  }
  const endObj = get(d, "end");
  if (udp) {
    // Per-stream UDP objects hold sender figures; the receiver's totals come from sum_received.
    const rcv = get(endObj, "sum_received");
    const sent = get(endObj, "sum_sent");
    for (const st of order) {
      st.bytesReceived = num(rcv, "bytes") / numStreams;
      st.peerTimeS = st.sender ? num(rcv, "end") : num(sent, "end");
      st.endTimeS = st.sender ? num(sent, "end") : num(rcv, "end");
    }
  }
  const cpu = get(endObj, "cpu_utilization_percent");
  const reverse = num(ts, "reverse") === 1;
  const bidir = order.some((s) => s.sender) && order.some((s) => !s.sender);
  const mode: Mode = bidir ? "bidir" : reverse !== (role === "server") ? "receiver" : "sender";
  const base: ReportTest = {
    role, protocol: udp ? "udp" : "tcp", mode, numStreams, unitFormat: "a", statsIntervalS: 1, verbose: false,
    senderHasRetransmits: shrIntervals, otherSideHasRetransmits: 0, streams: order,
    cpu: [num(cpu, "host_total"), num(cpu, "host_user"), num(cpu, "host_system")],
    remoteCpu: [num(cpu, "remote_total"), num(cpu, "remote_user"), num(cpu, "remote_system")],
    congestionUsed: undefined, remoteCongestionUsed: undefined, getServerOutput: false,
  };
  if (has(endObj, "sender_tcp_congestion")) {
    const v = get(endObj, "sender_tcp_congestion") as string;
    if (mode === "receiver") base.remoteCongestionUsed = v;
    else base.congestionUsed = v;
  }
  if (has(endObj, "receiver_tcp_congestion")) {
    const v = get(endObj, "receiver_tcp_congestion") as string;
    if (mode === "receiver") base.congestionUsed = v;
    else base.remoteCongestionUsed = v;
  }
  return { intervals: base, end: { ...base, senderHasRetransmits: shrEnd, otherSideHasRetransmits: otherEnd } };
}

function blankStream(socket: number, sender: boolean): ReportStream {
  return {
    id: 0, socket, sender, localHost: "", localPort: 0, remoteHost: "", remotePort: 0, intervals: [], bytesSent: 0, bytesReceived: 0,
    packetCount: 0, peerPacketCount: 0, omittedPacketCount: 0, cntError: 0, omittedCntError: 0, outOfOrder: 0, omittedOutOfOrder: 0, jitterS: 0,
    retransmits: 0, maxSndCwnd: 0, maxSndWnd: 0, maxRttUs: 0, minRttUs: 0, meanRttUs: 0, endTimeS: 0, peerTimeS: 0,
  };
}

function startFrom(d: CValue, role: "client" | "server"): StartInfo {
  const s = get(d, "start");
  const e = (s as Entries).entries;
  const ts = get(s, "test_start");
  const time = get(s, "timestamp");
  const bufs = e.filter(([k]) => k === "sock_bufsize").map((_, i) => ({
    sockBufsize: e.filter(([k]) => k === "sock_bufsize")[i]![1] as number,
    sndbufActual: e.filter(([k]) => k === "sndbuf_actual")[i]![1] as number,
    rcvbufActual: e.filter(([k]) => k === "rcvbuf_actual")[i]![1] as number,
  }));
  const peer = get(s, role === "client" ? "connecting_to" : "accepted_connection");
  return {
    role,
    connected: (get(s, "connected") as CValue[]).map((c) => ({
      socket: num(c, "socket"), localHost: get(c, "local_host") as string, localPort: num(c, "local_port"), remoteHost: get(c, "remote_host") as string, remotePort: num(c, "remote_port"),
    })),
    version: get(s, "version") as string,
    systemInfo: get(s, "system_info") as string,
    timestamp: new Date(num(time, "timesecs") * 1000),
    connectingTo: role === "client" ? { host: get(peer, "host") as string, port: num(peer, "port") } : undefined,
    acceptedConnection: role === "server" ? { host: get(peer, "host") as string, port: num(peer, "port") } : undefined,
    cookie: get(s, "cookie") as string,
    tcpMss: has(s, "tcp_mss_default") ? { explicit: false, value: num(s, "tcp_mss_default") } : has(s, "tcp_mss") ? { explicit: true, value: num(s, "tcp_mss") } : undefined,
    targetBitrate: num(s, "target_bitrate"),
    sockBufs: bufs,
    testStart: {
      protocol: get(ts, "protocol") as "TCP" | "UDP", numStreams: num(ts, "num_streams"), blksize: num(ts, "blksize"), omit: num(ts, "omit"), duration: num(ts, "duration"),
      bytes: num(ts, "bytes"), blocks: num(ts, "blocks"), reverse: num(ts, "reverse") === 1, tos: num(ts, "tos"), targetBitrate: num(ts, "target_bitrate"),
    },
  };
}

function reprint(d: CValue, role: "client" | "server", shrIntervals: number, shrEnd: number, otherEnd = 0): string {
  const m = modelFrom(d, role, shrIntervals, shrEnd, otherEnd);
  const n = (get(d, "intervals") as CValue[]).length;
  const intervals = Array.from({ length: n }, (_, k) => jsonInterval(m.intervals, k)!);
  return jsonDocumentText({ start: jsonStart(startFrom(d, role)), intervals, end: jsonEnd(m.end) });
}

describe("-J documents: our printer reproduces the stock client's byte for byte", () => {
  // [fixture, side, sender_has_retransmits during intervals, at the end, peer's (bidir)]
  test.each([
    ["iperf3-client-json-tcp.txt", undefined, 1, 1, 0],
    ["iperf3-client-json-rev.txt", undefined, 0, 1, 0],
    ["iperf3-client-json-bidir.txt", undefined, 1, 1, 1],
    ["iperf3-client-json-udp.txt", undefined, 0, 0, 0],
    ["iperf3-client-json-udprev.txt", undefined, 0, 0, 0],
    ["iperf3-out-json-omit.txt", "client", 1, 1, 0],
    ["iperf3-out-json-udp-p2.txt", "client", 0, 0, 0],
  ] as const)("%s", (name, side, shrI, shrE, other) => {
    const { text, value } = doc(name, side);
    expect(reprint(value, "client", shrI, shrE, other)).toBe(`${text}\n`);
  });

  test("a stock server's -J document (receiver, before the results exchange)", () => {
    const { text, value } = doc("iperf3-out-server-json.txt", "server");
    expect(reprint(value, "server", 0, 0)).toBe(`${text}\n`);
  });
});

describe("failure and extras", () => {
  test("the captured error document", () => {
    const { text } = doc("iperf3-client-json-error.txt");
    const start = jsonStart({ role: "client", connected: [], version: "iperf 3.12", systemInfo: "Linux vm 6.18.44-fc-v1045 #1 SMP PREEMPT_DYNAMIC @0 x86_64", sockBufs: [] });
    expect(jsonDocumentText({ start, intervals: [], end: new Entries([]), error: "unable to connect to server: Connection refused" })).toBe(`${text}\n`);
  });

  test("--json-stream lines are compact {event, data} objects", () => {
    expect(jsonStreamLine("interval", new Entries([["sum", new Entries([["bytes", 10]])]]))).toBe('{"event":"interval","data":{"sum":{"bytes":10}}}\n');
    expect(jsonStreamLine("error", "boom")).toBe('{"event":"error","data":"boom"}\n');
  });

  test("title, extra data and server output follow end, in 3.12's order", () => {
    const t = jsonDocumentText({ start: new Entries([]), intervals: [], end: new Entries([]), title: "T", extraData: "X", serverOutputText: "out\n", error: "e" });
    expect(t.indexOf('"title"')).toBeLessThan(t.indexOf('"extra_data"'));
    expect(t.indexOf('"extra_data"')).toBeLessThan(t.indexOf('"server_output_text"'));
    expect(t.indexOf('"server_output_text"')).toBeLessThan(t.indexOf('"error"'));
  });
});
