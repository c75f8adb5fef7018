import { describe, expect, test } from "bun:test";
import { UDP_HELLO, UDP_REPLY, decodeUdpHeader, encodeUdpHeader, isHelloReply, replyToHello, udpHeaderSize } from "./udp.ts";
import { readFixture } from "../../tests/fixtures/iperf3/capture.ts";

const hex = (h: string) => Uint8Array.from(h.match(/../g)!.map((x) => parseInt(x, 16)));

/** The "## 4. UDP datagrams" lines of a capture: [src port, dst port, length, first bytes]. */
function datagrams(name: string): Array<{ src: number; len: number; head: Uint8Array }> {
  return [...readFixture(name).matchAll(/^frame \d+ t=\S+ (\d+)->(\d+) len=(\d+) first24=([0-9a-f]+)$/gm)].map((m) => ({
    src: Number(m[1]),
    len: Number(m[3]),
    head: hex(m[4]!),
  }));
}

describe("UDP handshake", () => {
  test.each(["iperf3-udp-control.txt", "iperf3-udp-reverse-control.txt", "iperf3-udp-64bit-control.txt"])("%s: hello and reply bytes", (name) => {
    const [hello, reply] = datagrams(name);
    expect(hello!.head).toEqual(UDP_HELLO);
    expect(reply!.head).toEqual(UDP_REPLY);
    expect(replyToHello(hello!.head)).toEqual(reply!.head);
    expect(isHelloReply(reply!.head)).toBe(true);
  });

  test("stray datagrams get no reply; a big-endian hello gets the swapped reply", () => {
    expect(replyToHello(Uint8Array.of(1, 2, 3, 4))).toBeUndefined();
    expect(replyToHello(new Uint8Array(12))).toBeUndefined();
    expect(replyToHello(UDP_REPLY)).toEqual(UDP_HELLO);
    expect(isHelloReply(Uint8Array.of(0xb1, 0x68, 0xde, 0x3a))).toBe(true);
    expect(isHelloReply(Uint8Array.of(0, 0, 0, 0))).toBe(false);
  });
});

describe("datagram header", () => {
  test("32-bit counters: captured datagrams decode to sequence 1, 2, 3 ...", () => {
    const data = datagrams("iperf3-udp-reverse-control.txt").filter((d) => d.len === 32768);
    expect(data.map((d) => decodeUdpHeader(d.head, false)!.seq)).toEqual(data.map((_, i) => i + 1));
    expect(decodeUdpHeader(data[0]!.head, false)).toEqual({ sec: 0x5ee, usec: 0xef57, seq: 1 });
  });

  test("64-bit counters: captured datagrams decode and re-encode", () => {
    const data = datagrams("iperf3-udp-64bit-control.txt").filter((d) => d.len === 100);
    expect(data.length).toBeGreaterThan(4);
    data.forEach((d, i) => {
      const h = decodeUdpHeader(d.head, true)!;
      expect(h.seq).toBe(i + 1);
      const out = new Uint8Array(16);
      encodeUdpHeader(out, h, true);
      expect(Array.from(out)).toEqual(Array.from(d.head.subarray(0, 16)));
    });
  });

  test("sizes and short datagrams", () => {
    expect(udpHeaderSize(false)).toBe(12);
    expect(udpHeaderSize(true)).toBe(16);
    expect(decodeUdpHeader(new Uint8Array(11), false)).toBeUndefined();
    expect(decodeUdpHeader(new Uint8Array(15), true)).toBeUndefined();
    expect(() => encodeUdpHeader(new Uint8Array(8), { sec: 0, usec: 0, seq: 1 }, false)).toThrow(RangeError);
  });

  test("encoding into a slice of a larger buffer leaves the rest alone", () => {
    const buf = new Uint8Array(40).fill(0xaa);
    encodeUdpHeader(buf.subarray(8, 28), { sec: 1, usec: 2, seq: 3 }, false);
    expect(buf.subarray(0, 8).every((b) => b === 0xaa)).toBe(true);
    expect(decodeUdpHeader(buf.subarray(8), false)).toEqual({ sec: 1, usec: 2, seq: 3 });
    expect(buf[20]).toBe(0xaa);
  });
});
