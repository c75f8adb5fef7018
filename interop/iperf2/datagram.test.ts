import { describe, expect, test } from "bun:test";
import { loadCapture } from "../../tests/fixtures/iperf2/captures.ts";
import { digitsPayload, finSeq, readIperf2, stampIperf2, udpTemplate } from "./datagram.ts";
import { Iperf2WireError } from "./wire-error.ts";

const udp = loadCapture("iperf2-udp.txt").messages.filter((m) => m.dstPort === 20511);
const reverse = loadCapture("iperf2-udp-reverse.txt").messages.filter((m) => m.srcPort === 20521);

describe("iperf 2 datagram block", () => {
  test("captured client datagrams count 1.. and end with FIN -(last + 1)", () => {
    const seqs = udp.map((m) => readIperf2(m.bytes).seq);
    expect(seqs).toEqual([1, 2, 3, 4, 5, 6, 89, 90, 91, 92, -93]);
    expect(finSeq(92)).toBe(-93);
  });

  test("stamping seq, sec and usec reproduces the captured 16 bytes, FIN included", () => {
    for (const m of [...udp, ...reverse]) {
      const s = readIperf2(m.bytes);
      const buf = new Uint8Array(16);
      stampIperf2(buf, s.seq, s.sec, s.usec);
      expect(buf).toEqual(m.bytes.subarray(0, 16));
    }
  });

  test("wall-clock seconds in the stamp (2026 epoch seconds, not a monotonic clock)", () => {
    const s = readIperf2(udp[0]!.bytes);
    expect(s.sec).toBeGreaterThan(1.7e9);
    expect(s.usec).toBeLessThan(1e6);
  });

  test("server -R datagrams are the block then ASCII digits counted from offset 0", () => {
    for (const m of reverse.filter((x) => readIperf2(x.bytes).seq > 0)) {
      const s = readIperf2(m.bytes);
      const buf = digitsPayload(m.length);
      stampIperf2(buf, s.seq, s.sec, s.usec);
      expect(buf.subarray(0, m.bytes.length)).toEqual(m.bytes);
    }
  });

  test("client template: the 60-byte header at offset 16 of zeros; the rest stays zero", () => {
    const first = udp[0]!;
    const header = first.bytes.slice(16, 76);
    const t = udpTemplate(first.length, header);
    expect(t.length).toBe(1470);
    expect(t.subarray(16, 96)).toEqual(first.bytes.subarray(16, 96));
    expect(t.subarray(76).every((b) => b === 0)).toBe(true);
    // A datagram too small for the header carries none rather than half of one.
    expect(udpTemplate(40, header).every((b) => b === 0)).toBe(true);
  });

  test("64-bit sequence numbers round-trip, negative ones too", () => {
    for (const seq of [1, 0x7fffffff, 0x80000000, 0xffffffff, 2 ** 32 + 5, 2 ** 40, -1, -93, -(2 ** 32) - 7]) {
      const buf = new Uint8Array(16);
      stampIperf2(buf, seq, 1, 2);
      expect(readIperf2(buf).seq).toBe(seq);
    }
  });

  test("an old client's 32-bit FIN (no seqno64 flag, zero high word) reads as negative when told", () => {
    const buf = new Uint8Array(16);
    new DataView(buf.buffer).setInt32(0, -93);
    expect(readIperf2(buf, false).seq).toBe(-93);
    expect(readIperf2(buf).seq).toBe(2 ** 32 - 93);
  });

  test("short datagrams are a typed error at every length below 16", () => {
    for (let i = 0; i < 16; i++) {
      let err: unknown;
      try {
        readIperf2(new Uint8Array(i));
      } catch (e) {
        err = e;
      }
      expect((err as Iperf2WireError).code).toBe("short");
    }
  });
});
