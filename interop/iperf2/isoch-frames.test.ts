import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { decodeClientHeader, UDP_HEADER_OFFSET } from "./client-header.ts";
import { IsochFrames, type IsochPayload, UDP_ISOCH_SETTINGS_AT, isochOffset, readIsochPayload, readIsochSettings } from "./isoch-frames.ts";
import { describeClientHeader } from "./client-request.ts";
import { sampleStdev } from "../../src/formulas.ts";

/** version line -> the captured datagrams (first 112 bytes) and their lengths, tests/fixtures/iperf2/isoch-udp-datagrams.txt. */
function captures(): Map<string, { bytes: Uint8Array; length: number }[]> {
  const out = new Map<string, { bytes: Uint8Array; length: number }[]>();
  let current: { bytes: Uint8Array; length: number }[] = [];
  for (const line of readFileSync(join(import.meta.dir, "../../tests/fixtures/iperf2/isoch-udp-datagrams.txt"), "utf8").split("\n")) {
    const v = /^## iperf version (\S+)/.exec(line);
    if (v) out.set(v[1]!, (current = []));
    const d = /^([0-9a-f]+) len=(\d+)$/.exec(line);
    if (d) current.push({ bytes: Uint8Array.from(Buffer.from(d[1]!, "hex")), length: Number(d[2]) });
  }
  return out;
}

describe("the isochronous payload of captured stock datagrams", () => {
  // 2.1.8 announces a 92-byte header (108 with the datagram block), 2.2.1 a 96-byte one: the payload follows.
  for (const [version, at] of [["2.1.8", 76], ["2.2.1", 80]] as const) {
    test(`${version}: at offset ${at}, the first datagram's zero, the next ones frame 1 of 2083 bytes at 60 frames/s`, () => {
      const d = captures().get(version)!;
      const header = decodeClientHeader(d[0]!.bytes.subarray(UDP_HEADER_OFFSET), "udp");
      expect(isochOffset(header)).toBe(at);
      expect(readIsochPayload(d[0]!.bytes, at)!.frameId).toBe(0);
      const first = readIsochPayload(d[1]!.bytes, at)!;
      expect(first).toMatchObject({ periodUs: 16666, prevFrameId: 0, frameId: 1, frameSize: 2083, remaining: 2083 });
      expect(readIsochPayload(d[2]!.bytes, at)).toMatchObject({ frameId: 1, remaining: 613, startSec: first.startSec, startUsec: first.startUsec });
      expect(readIsochPayload(d[3]!.bytes, at)).toMatchObject({ prevFrameId: 1, frameId: 2, remaining: 2083 });
    });
  }

  test("a datagram too short for the payload holds none", () => {
    expect(readIsochPayload(new Uint8Array(107), 76)).toBeUndefined();
    expect(readIsochPayload(new Uint8Array(108), 76)).toBeDefined();
  });
});

/** Frame `id`'s two datagrams (1470 + 613 bytes) of a 60 frames/s test that started at 1000 s. */
function frame(id: number, prev = id - 1): [IsochPayload, number][] {
  const base = { periodUs: 16666, startSec: 1000, startUsec: 0, prevFrameId: prev, frameId: id, frameSize: 2083 };
  return [[{ ...base, remaining: 2083 }, 1470], [{ ...base, remaining: 613 }, 613]];
}

const scheduled = (id: number) => 1000 + (16666 * (id - 1)) / 1e6;

describe("frames as stock's reporter counts them", () => {
  test("complete frames: counted at their last datagram, the first twice; latency from each frame's schedule", () => {
    const f = new IsochFrames();
    const delays = [0.0004, 0.0002, 0.0009];
    delays.forEach((delay, i) => {
      for (const [p, len] of frame(i + 1)) f.add(p, len, scheduled(i + 1) + delay);
    });
    const t = f.total();
    expect([t.frames, t.lost, t.latency.count]).toEqual([4, 0, 3]);
    expect(t.latency.min).toBeCloseTo(0.0002, 9);
    expect(t.latency.max).toBeCloseTo(0.0009, 9);
    expect(t.latency.mean).toBeCloseTo(0.0005, 9);
    expect(sampleStdev(t.latency.count, t.latency.sum, t.latency.sumSq)).toBeCloseTo(0.000360555, 8);
  });

  test("windows count their own frames; the latency stays the flow's", () => {
    const f = new IsochFrames();
    for (const [p, len] of [...frame(1), ...frame(2)]) f.add(p, len, scheduled(p.frameId) + 0.001);
    expect(f.window()).toMatchObject({ frames: 3, lost: 0 });
    for (const [p, len] of frame(3)) f.add(p, len, scheduled(3) + 0.003);
    const w = f.window();
    expect([w.frames, w.lost, w.latency.count, w.latency.max]).toEqual([1, 0, 3, expect.closeTo(0.003, 9)]);
    expect(f.window().frames).toBe(0);
    expect(f.total().frames).toBe(4);
  });

  test("a gap adds the id difference to the lost count and no latency; a frame whose ids skip is not complete", () => {
    const f = new IsochFrames();
    for (const [p, len] of frame(1)) f.add(p, len, scheduled(1));
    // Frames 2 and 3 lost whole: frame 4 follows frame 1 (stock counts the difference, 3).
    for (const [p, len] of frame(4, 3)) f.add(p, len, scheduled(4));
    // Frame 6 sent after frame 4 (prev id 4): not counted at all.
    for (const [p, len] of frame(6, 4)) f.add(p, len, scheduled(6));
    expect(f.total()).toMatchObject({ frames: 3, lost: 3 });
    expect(f.total().latency.count).toBe(1);
  });

  test("a frame whose last datagram is missing is not counted", () => {
    const f = new IsochFrames();
    f.add(frame(1)[0]![0], 1470, scheduled(1));
    expect(f.total()).toMatchObject({ frames: 0, lost: 0 });
  });
});

/** version and transport -> the -R requests of tests/fixtures/iperf2/isoch-reverse-requests.txt, in file order. */
function reverseRequests(): Map<string, Uint8Array[]> {
  const out = new Map<string, Uint8Array[]>();
  let key = "";
  for (const line of readFileSync(join(import.meta.dir, "../../tests/fixtures/iperf2/isoch-reverse-requests.txt"), "utf8").split("\n")) {
    const h = /^## (\S+) (tcp|udp):/.exec(line);
    if (h) key = `${h[1]} ${h[2]}`;
    else if (/^[0-9a-f]+$/.test(line)) out.set(key, [...(out.get(key) ?? []), Uint8Array.from(Buffer.from(line, "hex"))]);
  }
  return out;
}

describe("the isochronous settings of captured -R requests (whole part, then millionths)", () => {
  for (const version of ["2.1.8", "2.2.1"]) {
    test(`${version} TCP: in the header, offset 80; the request says what frames to send`, () => {
      const [plain, custom] = reverseRequests().get(`${version} tcp`)!;
      const r = (b: Uint8Array) => describeClientHeader(decodeClientHeader(b, "tcp"), "tcp");
      expect(r(plain!)).toMatchObject({ direction: "reverse", isochronous: true, isochSettings: { perSecond: 60, meanBps: 20e6, stddevBps: 0, ipgMs: 0 } });
      expect(r(custom!).isochSettings).toEqual({ perSecond: 30, meanBps: 2e6, stddevBps: 1e5, ipgMs: 0 });
    });
  }

  test("UDP: past the announced header, datagram offset 128; the gap in ms (stock's default 5e-6)", () => {
    const [plain, custom] = reverseRequests().get("2.1.8 udp")!;
    expect(readIsochSettings(plain!, UDP_ISOCH_SETTINGS_AT)).toEqual({ perSecond: 60, meanBps: 20e6, stddevBps: 0, ipgMs: 0.000005 });
    expect(readIsochSettings(custom!, UDP_ISOCH_SETTINGS_AT)).toEqual({ perSecond: 30, meanBps: 2e6, stddevBps: 1e5, ipgMs: 0.1 });
    expect(readIsochSettings(reverseRequests().get("2.2.1 udp")![0]!, UDP_ISOCH_SETTINGS_AT)).toMatchObject({ perSecond: 60, meanBps: 20e6 });
  });

  test("a frame rate or mean of 0 is no request", () => {
    expect(readIsochSettings(new Uint8Array(200), UDP_ISOCH_SETTINGS_AT)).toBeUndefined();
    expect(readIsochSettings(new Uint8Array(150), UDP_ISOCH_SETTINGS_AT)).toBeUndefined();
  });

  test("the frame fields' offset follows the client's version, whatever its header's length", () => {
    for (const [version, at] of [["2.1.8", 76], ["2.2.1", 80]] as const) {
      const d = reverseRequests().get(`${version} udp`)![0]!;
      expect(isochOffset(decodeClientHeader(d.subarray(UDP_HEADER_OFFSET), "udp"))).toBe(at);
    }
  });
});
