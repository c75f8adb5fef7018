import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { StampedWrites } from "../../src/stream-spec.ts";
import { WriteStamper } from "../../src/worker/write-stamp.ts";
import { TCP_BURST_HEADER, TCP_BURST_STAMPS, tcpBurstTemplate } from "./tcp-burst.ts";

/** A 2.1.8 client's `--trip-times -l 300 -n 1500` connection: its 80-byte header, then five stamped 300-byte bursts. */
const captured = (() => {
  const text = readFileSync(join(import.meta.dir, "../../tests/fixtures/iperf2/trip-times-tcp-stream.txt"), "utf8");
  const hex = text.split("\n").filter((l) => l && !l.startsWith("#")).join("");
  return Uint8Array.from(hex.match(/../g)!, (h) => parseInt(h, 16));
})();
const header = captured.subarray(0, 80);
const bursts = [0, 1, 2, 3, 4].map((i) => captured.subarray(80 + i * 300, 80 + (i + 1) * 300));
const u32 = (b: Uint8Array, at: number) => new DataView(b.buffer, b.byteOffset).getUint32(at);

describe("--trip-times TCP bursts, as a 2.1.8 client writes them", () => {
  test("template and stamps give the captured burst headers byte for byte, burst after burst", () => {
    const start = { sec: u32(bursts[0]!, 12), usec: u32(bursts[0]!, 16) };
    // The filler is not the header's business: the captured one is used so whole bursts compare.
    const payload = tcpBurstTemplate(header, bursts[0]!, start);
    const sent = bursts.map((b) => u32(b, 20) * 1e6 + u32(b, 24));
    let k = 0;
    const stamper = new WriteStamper(payload, StampedWrites.parse(TCP_BURST_STAMPS), () => sent[k]!);
    for (; k < bursts.length; k++) {
      stamper.stamp();
      expect(payload.subarray(0, TCP_BURST_HEADER.headerBytes)).toEqual(bursts[k]!.subarray(0, TCP_BURST_HEADER.headerBytes));
    }
    expect(bursts.map((b) => u32(b, 52))).toEqual([302, 602, 902, 1202, 1502]);
  });

  test("-l below the 92-byte header is refused with the fix", () => {
    expect(() => tcpBurstTemplate(header, new Uint8Array(64), { sec: 0, usec: 0 })).toThrow(/-l must be 92 or more/);
  });
});
