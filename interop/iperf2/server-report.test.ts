import { describe, expect, test } from "bun:test";
import { loadCapture } from "../../tests/fixtures/iperf2/captures.ts";
import { REPORT_LENGTH, REPORT_MIN_LENGTH, ServerReport, decodeServerReport, encodeServerReport, latencyValid } from "./server-report.ts";
import { Iperf2WireError } from "./wire-error.ts";

const plain = loadCapture("iperf2-udp.txt").messages.find((m) => m.length === 128)!;
const enhanced = loadCapture("iperf2-udp-server-e.txt").messages.find((m) => m.length === 128)!;

describe("server report", () => {
  test("plain server's report: the figures both sides printed ('0.0000-1.0210 sec 134 KBytes ... 0.012 ms 0/93')", () => {
    const r = decodeServerReport(plain.bytes);
    expect(r.totalBytes).toBe(136710); // 93 x 1470: the FIN datagram counts
    expect(r.duration).toBeCloseTo(1.02098, 6);
    expect(r.lost).toBe(0);
    expect(r.outOfOrder).toBe(0);
    expect(r.datagrams).toBe(93);
    expect(r.jitter).toBeCloseTo(0.000012, 9);
    // latency words are filled but not flagged: the client prints no -e columns from this one
    expect(latencyValid(r)).toBe(false);
    expect(r.latency?.transitCount).toBe(93);
  });

  test("-e server's report flags the latency words ('0.026/0.004/0.141/0.014 ms 91 pps')", () => {
    const r = decodeServerReport(enhanced.bytes);
    expect(latencyValid(r)).toBe(true);
    const l = r.latency!;
    expect(l.meanTransit).toBeCloseTo(0.000026, 9);
    expect(l.minTransit).toBeCloseTo(0.000004, 9);
    expect(l.maxTransit).toBeCloseTo(0.000141, 9);
    expect(Math.sqrt(l.m2Transit / (l.transitCount - 1)) / 1000).toBeCloseTo(0.014, 3);
    expect(l.ppsPackets / l.ppsSeconds).toBe(91);
  });

  test("decode then encode gives the captured 128 bytes back", () => {
    for (const m of [plain, enhanced]) expect(encodeServerReport(decodeServerReport(m.bytes))).toEqual(m.bytes);
  });

  test("prefixes: short below 56 bytes, the base figures from 56 bytes on (what the stock client needs)", () => {
    const whole = decodeServerReport(plain.bytes);
    for (let i = 0; i < REPORT_LENGTH; i++) {
      const part = plain.bytes.subarray(0, i);
      if (i < REPORT_MIN_LENGTH) {
        let err: unknown;
        try {
          decodeServerReport(part);
        } catch (e) {
          err = e;
        }
        expect((err as Iperf2WireError).code).toBe("short");
        continue;
      }
      const r = decodeServerReport(part);
      expect([r.totalBytes, r.duration, r.lost, r.datagrams, r.jitter]).toEqual([whole.totalBytes, whole.duration, whole.lost, whole.datagrams, whole.jitter]);
      expect(r.latency === undefined).toBe(i < 116);
    }
  });

  test("counts above 2^32 use the high words at 116..127", () => {
    const bytes = encodeServerReport({ flags: 0x88000000, totalBytes: 2 ** 40 + 3, duration: 300.5, lost: 2 ** 33 + 1, outOfOrder: 7, datagrams: 2 ** 34, jitter: 0.0001 });
    const r = decodeServerReport(bytes);
    expect([r.totalBytes, r.lost, r.outOfOrder, r.datagrams]).toEqual([2 ** 40 + 3, 2 ** 33 + 1, 7, 2 ** 34]);
    expect(r.duration).toBeCloseTo(300.5, 6);
  });

  test("64-bit counts past 2^53 saturate at 2^53 - 1, so a decoded report always passes its schema", () => {
    const bytes = new Uint8Array(REPORT_LENGTH);
    const v = new DataView(bytes.buffer);
    v.setUint32(16, 0x8000_0000);
    v.setUint32(20, 0xffff_ffff); // total bytes high word
    for (const high of [116, 120, 124]) v.setUint32(high, 0x0020_0000); // lost, out of order, datagrams: 2^53
    const r = decodeServerReport(bytes);
    expect([r.totalBytes, r.lost, r.outOfOrder, r.datagrams]).toEqual(Array(4).fill(Number.MAX_SAFE_INTEGER));
    expect(ServerReport.safeParse(r).success).toBe(true);
    v.setUint32(124, 0x001f_ffff);
    v.setUint32(44, 0xffff_fffe); // 2^53 - 2: still exact
    expect(decodeServerReport(bytes).datagrams).toBe(2 ** 53 - 2);
  });

  test("negative counts are a typed bad-value error", () => {
    expect(() => encodeServerReport({ flags: 0, totalBytes: -1, duration: 0, lost: 0, outOfOrder: 0, datagrams: 0, jitter: 0 })).toThrow(Iperf2WireError);
  });
});
