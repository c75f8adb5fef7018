import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { loadCapture } from "../../tests/fixtures/iperf2/captures.ts";
import { readIperf2, stampIperf2 } from "./datagram.ts";
import { type ServerReport, decodeServerReport } from "./server-report.ts";
import { RecordingDatagrams } from "./transport.ts";
import { type UdpFlow, UdpServerSession } from "./udp-server-session.ts";

/**
 * The capture shows 11 of the client's 93 datagrams (first 96 bytes each; the rest of every datagram is zeros).
 * Datagrams 7..88 are rebuilt from datagram 6 with their sequence number and an interpolated send time.
 */
function replayUdp(file: string, port: number): { datagrams: { bytes: Uint8Array; arrival: number }[]; report: Uint8Array } {
  const msgs = loadCapture(file).messages;
  const client = msgs.filter((m) => m.dstPort === port);
  const report = msgs.find((m) => m.srcPort === port && m.length === 128)!.bytes;
  const full = (b: Uint8Array, len: number) => {
    const out = new Uint8Array(len);
    out.set(b);
    return out;
  };
  const datagrams: { bytes: Uint8Array; arrival: number }[] = [];
  const at = (b: Uint8Array) => {
    const s = readIperf2(b);
    return s.sec + s.usec / 1e6 + 0.00002;
  };
  const template = full(client[5]!.bytes, 1470);
  const t6 = at(template);
  const t89 = at(client[6]!.bytes);
  for (const m of client.slice(0, 6)) datagrams.push({ bytes: full(m.bytes, m.length), arrival: at(m.bytes) });
  for (let seq = 7; seq <= 88; seq++) {
    const b = template.slice();
    const t = t6 + ((t89 - t6) * (seq - 6)) / (89 - 6);
    stampIperf2(b, seq, Math.floor(t), Math.round((t % 1) * 1e6));
    datagrams.push({ bytes: b, arrival: t + 0.00002 });
  }
  for (const m of client.slice(6)) datagrams.push({ bytes: full(m.bytes, m.length), arrival: at(m.bytes) });
  return { datagrams, report };
}

function server(enhanced = false) {
  const out = new RecordingDatagrams();
  const flows: UdpFlow[] = [];
  const ends: ServerReport[] = [];
  const s = new UdpServerSession(out, { flow: (f) => flows.push(f), end: (_f, r) => ends.push(r) }, { enhanced });
  return { s, out, flows, ends };
}

describe("UDP server session", () => {
  test("replayed 2.1.8 client: one flow, the report carries what the stock server reported", () => {
    for (const [file, port, enhanced] of [["iperf2-udp.txt", 20511, false], ["iperf2-udp-server-e.txt", 20541, true]] as const) {
      const { datagrams, report } = replayUdp(file, port);
      const { s, out, flows, ends } = server(enhanced);
      const from = { host: "127.0.0.1", port: 42130 };
      for (const d of datagrams) s.onDatagram(d.bytes, from, d.arrival);
      expect(flows.length).toBe(1);
      expect(flows[0]!.request?.amount).toEqual({ kind: "time", seconds: 1 });
      expect(out.sent.length).toBe(1);
      expect(out.sent[0]!.to).toEqual(from);
      expect(out.sent[0]!.bytes.length).toBe(128);
      const ours = decodeServerReport(out.sent[0]!.bytes);
      const stock = decodeServerReport(report);
      expect([ours.totalBytes, ours.datagrams, ours.lost, ours.outOfOrder, ours.flags]).toEqual([stock.totalBytes, stock.datagrams, stock.lost, stock.outOfOrder, stock.flags]);
      expect(Math.abs(ours.duration - stock.duration)).toBeLessThan(0.002);
      expect(ends.length).toBe(1);
    }
  });

  test("every resent FIN is answered with the same report; FINs of unknown flows get an empty one", () => {
    const { datagrams } = replayUdp("iperf2-udp.txt", 20511);
    const { s, out } = server();
    const from = { host: "127.0.0.1", port: 1000 };
    for (const d of datagrams) s.onDatagram(d.bytes, from, d.arrival);
    const fin = datagrams.at(-1)!;
    s.onDatagram(fin.bytes, from, fin.arrival + 0.01);
    expect(out.sent.length).toBe(2);
    expect(out.sent[1]!.bytes).toEqual(out.sent[0]!.bytes);
    s.onDatagram(fin.bytes, { host: "127.0.0.1", port: 2000 }, fin.arrival);
    expect(out.sent.length).toBe(3);
    expect(decodeServerReport(out.sent[2]!.bytes).datagrams).toBe(0);
  });

  test("interleaved clients (-P 2 uses two sockets) are separate flows with their own counts", () => {
    const { datagrams } = replayUdp("iperf2-udp.txt", 20511);
    const { s, out, flows } = server();
    const a = { host: "127.0.0.1", port: 1111 };
    const b = { host: "127.0.0.1", port: 2222 };
    datagrams.forEach((d, i) => {
      s.onDatagram(d.bytes, a, d.arrival);
      if (i % 2 === 0) s.onDatagram(d.bytes, b, d.arrival);
    });
    expect(flows.length).toBe(2);
    const byPort = new Map(out.sent.map((x) => [x.to.port, decodeServerReport(x.bytes)]));
    expect(byPort.get(1111)!.lost).toBe(0);
    expect(byPort.get(2222)!.lost).toBe(46);
    expect(byPort.get(2222)!.datagrams).toBe(93);
  });

  test("a finished flow's port starting again is a new flow", () => {
    const { datagrams } = replayUdp("iperf2-udp.txt", 20511);
    const { s, flows } = server();
    const from = { host: "127.0.0.1", port: 1000 };
    for (const d of datagrams) s.onDatagram(d.bytes, from, d.arrival);
    s.onDatagram(datagrams[0]!.bytes, from, datagrams[0]!.arrival + 5);
    expect(flows.length).toBe(2);
  });

  test("a FIN with sequence -2^63 is answered with a report whose counts saturate at 2^53 - 1", () => {
    const { datagrams } = replayUdp("iperf2-udp.txt", 20511);
    const { s, out, ends } = server();
    const from = { host: "127.0.0.1", port: 1001 };
    s.onDatagram(datagrams[0]!.bytes, from, datagrams[0]!.arrival);
    const fin = datagrams[0]!.bytes.slice();
    const v = new DataView(fin.buffer);
    v.setUint32(0, 0);
    v.setUint32(12, 0x8000_0000);
    expect(readIperf2(fin).seq).toBe(-(2 ** 63));
    s.onDatagram(fin, from, datagrams[0]!.arrival + 0.5);
    expect(out.sent.length).toBe(1);
    const r = decodeServerReport(out.sent[0]!.bytes);
    expect([r.datagrams, r.lost]).toEqual([Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER]);
    expect(ends.length).toBe(1);
  });

  test("idle flows are forgotten, and those without a FIN are returned", () => {
    const { datagrams } = replayUdp("iperf2-udp.txt", 20511);
    const { s } = server();
    s.onDatagram(datagrams[0]!.bytes, { host: "127.0.0.1", port: 1 }, 100);
    expect(s.expire(110).length).toBe(0);
    expect(s.expire(131).length).toBe(1);
    expect(s.activeFlows).toBe(0);
  });

  test("the flow table is bounded", () => {
    const out = new RecordingDatagrams();
    const s = new UdpServerSession(out, { flow: () => {}, end: () => {} }, { maxFlows: 3 });
    const d = new Uint8Array(100);
    stampIperf2(d, 1, 0, 0);
    for (let p = 1; p <= 10; p++) s.onDatagram(d, { host: "127.0.0.1", port: p }, 0);
    expect(s.activeFlows).toBe(3);
  });

  test("random datagrams never throw", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.uint8Array({ maxLength: 200 }), fc.integer({ min: 1, max: 4 })), { maxLength: 20 }), (ds) => {
        const { s } = server();
        for (const [bytes, port] of ds) s.onDatagram(bytes, { host: "127.0.0.1", port }, 0);
      }),
      { numRuns: 2000 },
    );
  });
});

/** The captured datagrams of an --isochronous --trip-times client, tests/fixtures/iperf2/isoch-udp-datagrams.txt. */
function isochCapture(version: string): Uint8Array[] {
  const text = readFileSync(join(import.meta.dir, "../../tests/fixtures/iperf2/isoch-udp-datagrams.txt"), "utf8");
  const block = text.split("## ").find((b) => b.startsWith(`iperf version ${version} `))!;
  return [...block.matchAll(/^([0-9a-f]+) len=(\d+)$/gm)].map((m) => {
    const out = new Uint8Array(Number(m[2]));
    out.set(Buffer.from(m[1]!, "hex").subarray(0, out.length));
    return out;
  });
}

describe("an --isochronous --trip-times client's flow", () => {
  for (const version of ["2.1.8", "2.2.1"]) {
    test(`${version}: the flow's clock starts at the client's own start; its frames are counted`, () => {
      const d = isochCapture(version);
      const v = new DataView(d[0]!.buffer);
      const start = v.getUint32(112) + v.getUint32(116) / 1e6;
      const { s, flows } = server();
      const from = { host: "127.0.0.1", port: 42131 };
      d.forEach((b, i) => s.onDatagram(b, from, start + 0.001 + i * 0.0001));
      const f = flows[0]!;
      expect(f.request?.isochronous).toBe(true);
      expect(f.stats.start).toBe(start);
      expect(f.stats.duration).toBeCloseTo(0.001 + 3 * 0.0001, 6);
      // Frame 1 is complete at its 613-byte datagram (counted twice, as stock counts the first); frame 2 is not yet.
      expect(f.frames?.counts.total()).toMatchObject({ frames: 2, lost: 0 });
    });
  }

  test("a start stamp further than 11 s from our clock is not taken: the clock starts at the first arrival", () => {
    const d = isochCapture("2.1.8");
    const { s, flows } = server();
    const late = new DataView(d[0]!.buffer).getUint32(112) + 60;
    s.onDatagram(d[0]!, { host: "127.0.0.1", port: 42132 }, late);
    expect(flows[0]!.stats.start).toBe(late);
  });
});
