import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { BurstClock } from "./burst-clock.ts";
import { TCP_BURST_HEADER as IPERF2 } from "../../interop/iperf2/tcp-burst.ts";

/** A 2.1.8 client's --trip-times connection: its 80-byte header, then five 300-byte stamped bursts. */
const captured = (() => {
  const text = readFileSync(join(import.meta.dir, "../../tests/fixtures/iperf2/trip-times-tcp-stream.txt"), "utf8");
  const hex = text.split("\n").filter((l) => l && !l.startsWith("#")).join("");
  return Uint8Array.from(hex.match(/../g)!, (h) => parseInt(h, 16));
})();
const stream = captured.subarray(80);
/** The bursts' write times as the capture holds them (sec 1796456953, these microseconds). */
const SENT_US = [751528, 751565, 751573, 751578, 751582].map((u) => 1796456953e6 + u);
const NOW_US = 1796456953e6 + 752000;

function timings(pieces: Uint8Array[]): number[] {
  const out: number[] = [];
  const clock = new BurstClock(IPERF2, (us) => out.push(us));
  for (const p of pieces) clock.feed(p, NOW_US);
  return out;
}

describe("BurstClock", () => {
  test("the captured stream whole: five bursts, each timed from its own stamp", () => {
    expect(stream.length).toBe(1500);
    expect(timings([stream])).toEqual(SENT_US.map((s) => NOW_US - s));
  });

  test("split at every offset: the same five timings", () => {
    for (let at = 0; at <= stream.length; at++) expect(timings([stream.subarray(0, at), stream.subarray(at)])).toEqual(SENT_US.map((s) => NOW_US - s));
  });

  test("a burst is timed at the read that brings its last byte, not before", () => {
    const out: number[] = [];
    const clock = new BurstClock(IPERF2, (us) => out.push(us));
    clock.feed(stream.subarray(0, 299), NOW_US);
    expect(out).toEqual([]);
    clock.feed(stream.subarray(299, 300), NOW_US + 10);
    expect(out).toEqual([NOW_US + 10 - SENT_US[0]!]);
  });

  test("a header whose size is below its own length stops the timing: the bytes are no bursts", () => {
    const bad = stream.slice(0, 300);
    new DataView(bad.buffer).setUint32(48, 10);
    expect(timings([bad, stream])).toEqual([]);
  });
});
