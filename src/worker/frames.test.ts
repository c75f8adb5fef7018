import { describe, expect, test } from "bun:test";
import { FrameClock, frameBytes, frameParts } from "./frames.ts";

describe("frameParts: a frame as datagrams, as stock's client cuts it", () => {
  test("20 Mbit/s at 60 frames/s in 1470-byte datagrams: 28 whole ones and the rest, each telling what is left", () => {
    const parts = frameParts(41666, 1470, 108);
    expect(parts.length).toBe(29);
    expect(parts[0]).toEqual({ length: 1470, remaining: 41666, frameSize: 41666 });
    expect(parts[1]).toEqual({ length: 1470, remaining: 40196, frameSize: 41666 });
    expect(parts.at(-1)).toEqual({ length: 506, remaining: 506, frameSize: 41666 });
    expect(parts.reduce((a, p) => a + p.length, 0)).toBe(41666);
  });

  test("the captured 1 Mbit/s frame: 1470 then 613 (tests/fixtures/iperf2/isoch-udp-datagrams.txt)", () => {
    expect(frameParts(2083, 1470, 108)).toEqual([{ length: 1470, remaining: 2083, frameSize: 2083 }, { length: 613, remaining: 613, frameSize: 2083 }]);
  });

  test("a rest shorter than the header goes as one header-sized datagram, and the frame size it carries becomes that", () => {
    expect(frameParts(1500, 1470, 108)).toEqual([{ length: 1470, remaining: 1500, frameSize: 1500 }, { length: 108, remaining: 108, frameSize: 108 }]);
    expect(frameParts(50, 1470, 108)).toEqual([{ length: 108, remaining: 108, frameSize: 108 }]);
  });
});

describe("frameBytes", () => {
  test("without a deviation: the mean's bits over the frame rate, whole bytes", () => {
    expect(frameBytes({ perSecond: 60, meanBps: 20e6, stddevBps: 0, minBytes: 108 })).toBe(41666);
    expect(frameBytes({ perSecond: 60, meanBps: 1e6, stddevBps: 0, minBytes: 108 })).toBe(2083);
    expect(frameBytes({ perSecond: 1000, meanBps: 1000, stddevBps: 0, minBytes: 108 })).toBe(108);
  });

  test("with one: log-normal sizes whose mean and spread are the ones asked for", () => {
    let seed = 1;
    // A fixed generator, so the test says the same every run.
    const random = () => ((seed = (seed * 48271) % 2147483647) / 2147483647);
    const n = 20_000;
    const sizes = Array.from({ length: n }, () => frameBytes({ perSecond: 10, meanBps: 8e6, stddevBps: 1.6e6, minBytes: 108 }, random));
    const mean = sizes.reduce((a, b) => a + b, 0) / n;
    const sd = Math.sqrt(sizes.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1));
    expect(mean).toBeGreaterThan(99_000);
    expect(mean).toBeLessThan(101_000);
    expect(sd).toBeGreaterThan(19_000);
    expect(sd).toBeLessThan(21_000);
    expect(Math.min(...sizes)).toBeGreaterThan(0);
  });
});

describe("FrameClock: stock's wait_tick", () => {
  test("frame 1 at the start, frame k at start + (k - 1) periods", () => {
    const c = new FrameClock(1000, 16.666);
    expect(c.next(1000)).toEqual({ id: 1, atMs: 1000, skipped: 0 });
    expect(c.next(1000.2)).toEqual({ id: 2, atMs: 1016.666, skipped: 0 });
    expect(c.next(1016.9).id).toBe(3);
  });

  test("a frame late past its next slots skips them: the next is the first slot not yet begun", () => {
    const c = new FrameClock(0, 10);
    c.next(0);
    // Frame 1 took 35 ms: slots 2, 3 and 4 (10, 20, 30 ms) have begun, frame 5 is next at 40 ms.
    expect(c.next(35)).toEqual({ id: 5, atMs: 40, skipped: 3 });
    // Exactly at a slot's time, that slot has begun.
    expect(c.next(50)).toEqual({ id: 7, atMs: 60, skipped: 1 });
  });
});
