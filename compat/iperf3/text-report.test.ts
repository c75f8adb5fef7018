import { describe, expect, test } from "bun:test";
import { DONE, acceptedLine, connectedLine, connectingLines, intervalBlock, serverListening, summaryBlock } from "./text-report.ts";
import type { ReportTest } from "./report-model.ts";
import { iv, report, stream } from "./testdata/report-builders.ts";
import { loadControlCapture, readFixture } from "../../tests/fixtures/iperf3/capture.ts";

/** A program-output section of a fixture, indentation removed, without our capture notes. */
function output(name: string, side: string): string {
  const raw = readFixture(name);
  const sec = raw.split(`### ${side}\n`)[1]!.split(/\n### /)[0]!;
  return sec
    .split("\n")
    .map((l) => l.replace(/^ {4}/, ""))
    .filter((l) => !/^(client|server|clientA|clientB) rc=/.test(l) && !l.startsWith("iperf3: interrupt"))
    .join("\n");
}

const K = 1024;
const M = 1024 * 1024;

function body(t: ReportTest): string {
  const n = Math.max(...t.streams.map((s) => s.intervals.length));
  return Array.from({ length: n }, (_, k) => intervalBlock(t, k)).join("") + summaryBlock(t);
}

const cwnd = 1178694;

describe("client and server text, as captured", () => {
  test("TCP, 1 stream (iperf3-tcp-control)", () => {
    const ivs = () => [iv(0, 1, 20 * 128 * K, { sndCwnd: cwnd }), iv(1, 2, 19 * 128 * K, { sndCwnd: cwnd })];
    const c = report({
      role: "client", mode: "sender", senderHasRetransmits: 1,
      streams: [stream(5, true, ivs(), { localPort: 35058, remotePort: 20201, bytesSent: 5111808, bytesReceived: 5111808, endTimeS: 2.000101, peerTimeS: 2.000204 })],
    });
    const cap = loadControlCapture("iperf3-tcp-control.txt").output;
    expect(connectingLines("127.0.0.1", 20201, false) + connectedLine(c.streams[0]!) + body(c) + DONE).toBe(cap.client!.trimEnd() + "\n");
    const s = report({
      role: "server", mode: "receiver",
      streams: [stream(5, false, ivs(), { localPort: 20201, remotePort: 35058, bytesReceived: 5111808, endTimeS: 2.000204 })],
    });
    expect(serverListening(20201, 1) + acceptedLine("127.0.0.1", 35056) + connectedLine(s.streams[0]!) + body(s)).toBe(cap.server!.split("iperf3: interrupt")[0]!);
  });

  test("TCP -P 4 with sums and separators (iperf3-out-tcp-p4)", () => {
    const sockets = [5, 7, 9, 12];
    const c = report({
      role: "client", mode: "sender", numStreams: 4, senderHasRetransmits: 1,
      streams: sockets.map((sk) =>
        stream(sk, true, [iv(0, 1, 6 * M, { sndCwnd: cwnd }), iv(1, 2, 6 * M, { sndCwnd: cwnd })], { bytesSent: 12 * M, bytesReceived: 12 * M, endTimeS: 2, peerTimeS: 2 }),
      ),
    });
    const want = output("iperf3-out-tcp-p4.txt", "client").split("\n").slice(5).join("\n");
    expect(body(c) + DONE).toBe(want.trimEnd() + "\n");
    const s = report({
      role: "server", mode: "receiver", numStreams: 4,
      streams: [5, 8, 11, 13].map((sk) => stream(sk, false, [iv(0, 1, 6 * M), iv(1, 2, 6 * M)], { bytesReceived: 12 * M, endTimeS: 2 })),
    });
    expect(body(s)).toBe(output("iperf3-out-tcp-p4.txt", "server").split("\n").slice(8).join("\n").trimEnd() + "\n");
  });

  test("UDP sender client and receiver server (iperf3-udp-control)", () => {
    const cap = loadControlCapture("iperf3-udp-control.txt").output;
    const c = report({
      role: "client", mode: "sender", protocol: "udp",
      streams: [stream(5, true, [iv(0, 1, 128 * K, { packets: 4 }), iv(1, 2, 128 * K, { packets: 4 })], {
        bytesSent: 256 * K, bytesReceived: 256 * K, packetCount: 8, peerPacketCount: 8, jitterS: 0.0000108, endTimeS: 2.00012, peerTimeS: 2.00044,
      })],
    });
    expect(body(c) + DONE).toBe(cap.client!.split("\n").slice(2).join("\n").trimEnd() + "\n");
    const s = report({
      role: "server", mode: "receiver", protocol: "udp",
      streams: [stream(5, false, [iv(0, 1, 128 * K, { packets: 4, jitterS: 0.0000081 }), iv(1, 2, 128 * K, { packets: 4, jitterS: 0.0000108 })], {
        bytesReceived: 256 * K, packetCount: 8, jitterS: 0.0000108, endTimeS: 2.00044,
      })],
    });
    expect(body(s)).toBe(cap.server!.split("\n").slice(5).join("\n").split("iperf3: interrupt")[0]!);
  });

  test("UDP -P 2: per-stream jitter and the averaged sum (iperf3-out-udp-p2)", () => {
    const dg = 32 * K;
    const mk = (sk: number, sender: boolean, j: number[], jEnd: number) =>
      stream(sk, sender, [iv(0, 1, 39 * dg, { packets: 39, jitterS: j[0]! }), iv(1, 2, 38 * dg, { packets: 38, jitterS: j[1]! })], {
        bytesSent: 77 * dg, bytesReceived: 77 * dg, packetCount: 77, peerPacketCount: 77, jitterS: jEnd, endTimeS: 2, peerTimeS: 2,
      });
    const c = report({ role: "client", mode: "sender", protocol: "udp", numStreams: 2, streams: [mk(5, true, [0, 0], 0.00002), mk(7, true, [0, 0], 0.0000149)] });
    expect(body(c) + DONE).toBe(output("iperf3-out-udp-p2.txt", "client").split("\n").slice(3).join("\n").trimEnd() + "\n");
    const s = report({
      role: "server", mode: "receiver", protocol: "udp", numStreams: 2,
      streams: [mk(5, false, [0.000025, 0.00002], 0.00002), mk(6, false, [0.000017, 0.0000149], 0.0000149)],
    });
    expect(body(s)).toBe(output("iperf3-out-udp-p2.txt", "server").split("\n").slice(6).join("\n").trimEnd() + "\n");
  });

  test("--bidir: TX/RX tags, both directions' retransmits (iperf3-bidir-control)", () => {
    const cap = loadControlCapture("iperf3-bidir-control.txt").output;
    const ivs = (tx: boolean) => [iv(0, 1, 10 * 128 * K, tx ? { sndCwnd: cwnd } : {}), iv(1, 2, 10 * 128 * K, tx ? { sndCwnd: cwnd } : {})];
    const totals = { bytesSent: 20 * 128 * K, bytesReceived: 20 * 128 * K, endTimeS: 2, peerTimeS: 2 };
    const c = report({
      role: "client", mode: "bidir", senderHasRetransmits: 1, otherSideHasRetransmits: 1,
      streams: [stream(5, true, ivs(true), totals), stream(7, false, ivs(false), totals)],
    });
    expect(body(c) + DONE).toBe(cap.client!.split("\n").slice(3).join("\n").trimEnd() + "\n");
    const s = report({
      role: "server", mode: "bidir", senderHasRetransmits: 1,
      streams: [stream(5, false, ivs(false), totals), stream(8, true, ivs(true), totals)],
    });
    expect(body(s)).toBe(cap.server!.split("\n").slice(6).join("\n").split("iperf3: interrupt")[0]!);
  });

  test("-R -P 2: no Retr column while receiving, the server's retransmits in the summary (iperf3-out-rev-p2)", () => {
    const mk = (sk: number) =>
      stream(sk, false, [iv(0, 1, 20 * 128 * K), iv(1, 2.0154, 19 * 128 * K)], { bytesSent: 39 * 128 * K, bytesReceived: 39 * 128 * K, retransmits: 1, endTimeS: 2.0154, peerTimeS: 2.034 });
    const c = report({ role: "client", mode: "receiver", numStreams: 2, senderHasRetransmits: 0, streams: [mk(5), mk(7)] });
    const n = c.streams[0]!.intervals.length;
    const intervals = Array.from({ length: n }, (_, k) => intervalBlock(c, k)).join("");
    // The stock client learns the server's sender_has_retransmits (1) in the results, before its summary.
    const summary = summaryBlock({ ...c, senderHasRetransmits: 1 });
    expect(intervals + summary + DONE).toBe(output("iperf3-out-rev-p2.txt", "client").split("\n").slice(4).join("\n").trimEnd() + "\n");
  });

  test("UDP --bidir: blank jitter column on the sending direction (iperf3-out-bidir-udp)", () => {
    const tx = stream(5, true, [iv(0, 1, 20 * 32 * K, { packets: 20 }), iv(1, 2, 19 * 32 * K, { packets: 19 })], {
      bytesSent: 39 * 32 * K, bytesReceived: 39 * 32 * K, packetCount: 39, peerPacketCount: 39, jitterS: 0.000013, endTimeS: 2, peerTimeS: 2,
    });
    const rx = stream(7, false, [iv(0, 1, 20 * 32 * K, { packets: 20, jitterS: 0.000008 }), iv(1, 2, 19 * 32 * K, { packets: 19, jitterS: 0.000097 })], {
      bytesSent: 39 * 32 * K, bytesReceived: 39 * 32 * K, packetCount: 39, peerPacketCount: 39, jitterS: 0.000097, endTimeS: 2, peerTimeS: 2,
    });
    const c = report({ role: "client", mode: "bidir", protocol: "udp", streams: [tx, rx] });
    expect(body(c) + DONE).toBe(output("iperf3-out-bidir-udp.txt", "client").split("\n").slice(3).join("\n").trimEnd() + "\n");
  });

  test("UDP -R -P 2 server: sender-only summary (iperf3-out-udprev-p2)", () => {
    const mk = (sk: number) => stream(sk, true, [iv(0, 1, 8 * 32 * K, { packets: 8 })], { bytesSent: 8 * 32 * K, packetCount: 8, endTimeS: 1 });
    const s = report({ role: "server", mode: "sender", protocol: "udp", numStreams: 2, streams: [mk(5), mk(6)] });
    expect(body(s)).toBe(output("iperf3-out-udprev-p2.txt", "server").split("\n").slice(6).join("\n").trimEnd() + "\n");
  });

  test("-O: omitted intervals are tagged (iperf3-omit-control)", () => {
    const cap = loadControlCapture("iperf3-omit-control.txt").output;
    const c = report({
      role: "client", mode: "sender", senderHasRetransmits: 1,
      streams: [stream(5, true, [iv(0, 1, 5 * 128 * K, { sndCwnd: cwnd, omitted: true }), iv(0, 1, 5 * 128 * K, { sndCwnd: cwnd })], {
        bytesSent: 5 * 128 * K, bytesReceived: 5 * 128 * K, endTimeS: 1.0, peerTimeS: 0.9995,
      })],
    });
    expect(body(c) + DONE).toBe(cap.client!.split("\n").slice(2).join("\n").trimEnd() + "\n");
  });

  test("--get-server-output appends the server's report (iperf3-out-gso-text)", () => {
    const serverText = output("iperf3-out-gso-text.txt", "client").split("Server output:\n")[1]!.split("\n\n\niperf Done.")[0]! + "\n";
    const c = report({
      role: "client", mode: "sender", senderHasRetransmits: 1, getServerOutput: true, serverOutputText: serverText,
      streams: [stream(5, true, [iv(0, 1, 10 * 128 * K, { sndCwnd: cwnd })], { bytesSent: 10 * 128 * K, bytesReceived: 10 * 128 * K, endTimeS: 1, peerTimeS: 1 })],
    });
    expect(body(c) + DONE).toBe(output("iperf3-out-gso-text.txt", "client").split("\n").slice(2).join("\n").trimEnd() + "\n");
  });

  test("-V: summary title, CPU and congestion lines (iperf3-out-tcp-verbose)", () => {
    const c = report({
      role: "client", mode: "sender", senderHasRetransmits: 1, verbose: true, cpu: [4.6, 0.04, 4.6], remoteCpu: [0.1, 0.1, 0.0], congestionUsed: "bbr", remoteCongestionUsed: "bbr",
      streams: [stream(5, true, [iv(0, 1, 10 * 128 * K, { sndCwnd: cwnd })], { bytesSent: 10 * 128 * K, bytesReceived: 10 * 128 * K, endTimeS: 1, peerTimeS: 1 })],
    });
    const want = output("iperf3-out-tcp-verbose.txt", "client").split("\n");
    expect(body(c) + DONE).toBe(want.slice(want.indexOf("[ ID] Interval           Transfer     Bitrate         Retr  Cwnd")).join("\n").trimEnd() + "\n");
  });

  test("a short trailing interval without data is dropped", () => {
    const c = report({ role: "server", mode: "receiver", streams: [stream(5, false, [iv(0, 1, M), iv(1, 1.05, 0)], { bytesReceived: M, endTimeS: 1.05 })] });
    expect(intervalBlock(c, 1)).toBe("");
    expect(intervalBlock(c, 0)).toContain("1.00 MBytes");
  });

  test("-f selects the rate unit; 100% loss prints like %.2g", () => {
    const c = report({
      role: "server", mode: "receiver", protocol: "udp", unitFormat: "K",
      streams: [stream(5, false, [iv(0, 1, 0, { packets: 10, lost: 10 })], { packetCount: 10, cntError: 10, endTimeS: 1 })],
    });
    expect(intervalBlock(c, 0)).toContain("0.00 KBytes/sec  0.000 ms  10/10 (1e+02%)");
  });
});
