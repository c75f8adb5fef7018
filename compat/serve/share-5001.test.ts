import { describe, expect, test } from "bun:test";
import { decide5001 } from "./share-5001.ts";

const hex = (s: string) => Uint8Array.from(s.match(/../g)!.map((h) => parseInt(h, 16)));
/** The first words of iperf 2.1.8 client headers (docs/protocols/iperf2.md §2.4): plain -c, -r, -d, -R, UDP-less. */
const IPERF2_FIRST = ["40010078", "c0010078", "c0010079", "44010078", "46010078", "400100a0"];

describe("port 5001: iperf 2 or ntttcp by the first bytes", () => {
  test("every iperf 2.1.8 header goes to iperf, whole or cut after its first byte", () => {
    for (const h of IPERF2_FIRST) {
      expect(decide5001(hex(h), "127.0.0.1", false)).toBe("iperf");
      expect(decide5001(hex(h).subarray(0, 1), "127.0.0.1", false)).toBe("iperf");
    }
  });
  test("a headerless iperf -C client (ASCII digits) goes to iperf", () => {
    expect(decide5001(new TextEncoder().encode("0123456789"), undefined, false)).toBe("iperf");
  });
  test("ntttcp's 'A' payload goes to ntttcp; fewer than 4 'A's wait for more, or go to ntttcp when the hold ends", () => {
    expect(decide5001(new Uint8Array(65536).fill(0x41), undefined, false)).toBe("ntttcp");
    expect(decide5001(Uint8Array.of(0x41, 0x41), undefined, false)).toBe("wait");
    expect(decide5001(Uint8Array.of(0x41, 0x41), undefined, true)).toBe("ntttcp");
    expect(decide5001(Uint8Array.of(0x41, 0x01), undefined, false)).toBe("iperf");
  });
  test("nothing sent: wait (an ntttcp sync sender writes once its test starts), dropped when the hold ends", () => {
    expect(decide5001(new Uint8Array(0), "127.0.0.1", false)).toBe("wait");
    expect(decide5001(new Uint8Array(0), "127.0.0.1", true)).toBe("drop");
  });
});
