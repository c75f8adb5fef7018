import { describe, expect, test } from "bun:test";
import { datagramCodecs } from "./datagram-formats.ts";

describe("datagram codecs", () => {
  test("iperf3 32-bit layout matches the capture bytes", () => {
    // iperf3-udp-control capture: 000005c0 000ef223 00000001
    const b = new Uint8Array(12);
    const v = new DataView(b.buffer);
    datagramCodecs.iperf3.stamp(v, 1, 0x5c0 * 1e6 + 0xef223);
    expect(Buffer.from(b).toString("hex")).toBe("000005c0000ef22300000001");
    expect(datagramCodecs.iperf3.seq(v)).toBe(1);
    expect(datagramCodecs.iperf3.sentUs(v)).toBe(0x5c0 * 1e6 + 0xef223);
  });
  test("iperf3 64-bit counter", () => {
    const v = new DataView(new ArrayBuffer(16));
    datagramCodecs["iperf3-64"].stamp(v, 2 ** 33 + 5, 0);
    expect(datagramCodecs["iperf3-64"].seq(v)).toBe(2 ** 33 + 5);
  });
  test("iperf 2 FIN id is negative with id2 all ones", () => {
    const b = new Uint8Array(16);
    const v = new DataView(b.buffer);
    datagramCodecs.iperf2.stamp(v, -93, 0);
    expect(Buffer.from(b.subarray(0, 4)).toString("hex")).toBe("ffffffa3");
    expect(Buffer.from(b.subarray(12, 16)).toString("hex")).toBe("ffffffff");
    expect(datagramCodecs.iperf2.seq(v)).toBe(-93);
    datagramCodecs.iperf2.stamp(v, 92, 0);
    expect(datagramCodecs.iperf2.seq(v)).toBe(92);
  });
  test("anyperf round-trips large and negative sequences", () => {
    const v = new DataView(new ArrayBuffer(16));
    for (const s of [1, 2 ** 40 + 3, -7, -(2 ** 35)]) {
      datagramCodecs.anyperf.stamp(v, s, 123.5);
      expect(datagramCodecs.anyperf.seq(v)).toBe(s);
      expect(datagramCodecs.anyperf.sentUs(v)).toBe(123.5);
    }
  });
  test("short datagrams have no sequence", () => {
    expect(datagramCodecs.anyperf.seq(new DataView(new ArrayBuffer(8)))).toBeNaN();
    expect(datagramCodecs.none.seq(new DataView(new ArrayBuffer(64)))).toBeNaN();
  });
});
