import { describe, expect, test } from "bun:test";
import { loadCapture } from "../../tests/fixtures/iperf2/captures.ts";
import { readIperf2 } from "./datagram.ts";
import { UdpClientSession } from "./udp-client-session.ts";

const udp = loadCapture("iperf2-udp.txt").messages;
const rev = loadCapture("iperf2-udp-reverse.txt").messages;

describe("UDP client session", () => {
  test("the template is the stock client's datagram without its stamp (iperf -c -p 20511 -u -t 1)", () => {
    const c = new UdpClientSession({ transport: "udp", amount: { kind: "time", seconds: 1 }, rate: 1048576, listenPort: 20511 }, 1470);
    const first = udp.find((m) => m.frame === 1)!;
    expect(c.template.length).toBe(1470);
    expect(c.template.subarray(16, 96)).toEqual(first.bytes.subarray(16));
    const s = readIperf2(first.bytes);
    const d = c.datagram(1, s.sec + s.usec / 1e6);
    expect(d.subarray(0, 96)).toEqual(first.bytes);
  });

  test("FIN after 92 data datagrams is -93, resends count down; the answer is the report", () => {
    const c = new UdpClientSession({ transport: "udp", amount: { kind: "time", seconds: 1 } }, 1470);
    expect(c.onDatagram(new Uint8Array(128), 0).kind).toBe("ignored"); // nothing is a report before the FIN
    expect(readIperf2(c.fin(92, 0, 1)).seq).toBe(-93);
    expect(readIperf2(c.fin(92, 3, 1)).seq).toBe(-96);
    const report = udp.find((m) => m.length === 128)!.bytes;
    const out = c.onDatagram(report, 2);
    expect(out.kind).toBe("report");
    expect(out.kind === "report" && out.report?.datagrams).toBe(93);
    expect(c.finished).toBe(true);
  });

  test("a reply too short to decode still ends the wait, with no figures", () => {
    const c = new UdpClientSession({ transport: "udp", amount: { kind: "time", seconds: 1 } }, 1470);
    c.fin(1, 0, 0);
    expect(c.onDatagram(new Uint8Array(16), 0)).toEqual({ kind: "report", report: null });
  });

  test("-R: the server's captured datagrams are counted like a server counts them; its FIN ends the test", () => {
    const c = new UdpClientSession({ transport: "udp", amount: { kind: "time", seconds: 1 }, direction: "reverse" }, 1470);
    const fromServer = rev.filter((m) => m.srcPort === 20521);
    const kinds = fromServer.map((m) => {
      const full = new Uint8Array(m.length);
      full.set(m.bytes);
      const s = readIperf2(m.bytes);
      return c.onDatagram(full, s.sec + s.usec / 1e6).kind;
    });
    expect(kinds.at(-1)).toBe("fin");
    expect(kinds.slice(0, -1).every((k) => k === "data")).toBe(true);
    // frames 2..6 are ids 1..5, frames 88..92 ids 87..91, FIN -92: the capture omits 6..86
    expect(c.received.datagrams).toBe(92);
    expect(c.received.lost).toBe(92 - fromServer.length);
  });
});
