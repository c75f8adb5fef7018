import { describe, expect, test } from "bun:test";
import { DEFAULT_BURST_MS, Pacer } from "./pacer.ts";

/** A datagram sender as the workers run it: whole datagrams, one more whenever any credit is left. */
function sendDatagrams(p: Pacer, now: number, size: number): number {
  const a = p.allowance(now, size);
  const n = Math.floor(a / size) || (a > 0 ? 1 : 0);
  if (n > 0) p.consume(n * size, n);
  return n;
}

/** Runs a datagram sender on a fake clock for `ms`, waking exactly when told (plus `late` ms, if given). */
function run(p: Pacer, size: number, ms: number, late: () => number = () => 0) {
  let now = 0;
  let packets = 0;
  let wakeups = 0;
  while (now < ms) {
    const n = sendDatagrams(p, now, size);
    packets += n;
    if (n === 0) {
      now += p.waitMs(now, size) + late();
      wakeups++;
    }
  }
  return { packets, bytes: packets * size, wakeups, now };
}

describe("Pacer", () => {
  test("no rate: unlimited", () => {
    for (const p of [new Pacer(), new Pacer({ bitsPerSecond: 0, packetsPerSecond: 0 })]) {
      expect(p.unlimited).toBe(true);
      expect(p.allowance(0, 1500)).toBe(Infinity);
      p.consume(1e12, 1e9);
      expect(p.allowance(0, 1500)).toBe(Infinity);
      expect(p.waitMs(0)).toBe(0);
    }
  });

  test("hand-computed bucket: 8000 bit/s, 100-byte burst", () => {
    // 8000 bit/s = 1000 B/s = 1 byte per ms.
    const p = new Pacer({ bitsPerSecond: 8000, burstBytes: 100 }, () => 0);
    expect(p.unlimited).toBe(false);
    expect(p.allowance(0)).toBe(100); // starts full
    p.consume(100, 1);
    expect(p.allowance(0)).toBe(0);
    expect(p.waitMs(0)).toBeCloseTo(1, 5); // one byte after 1 ms
    expect(p.allowance(30)).toBe(30);
    p.consume(30, 1);
    expect(p.allowance(30)).toBe(0);
    expect(p.allowance(1000)).toBe(100); // refilled, capped at the burst
    // Debt: a 250-byte datagram sent on 100 bytes of credit leaves -150; 1 byte of credit is back after 151 ms.
    p.consume(250, 1);
    expect(p.allowance(1000)).toBe(0);
    expect(p.waitMs(1000)).toBeCloseTo(151, 5);
    expect(p.allowance(1150)).toBe(0);
    expect(p.allowance(1151.5)).toBe(1);
    // Asking for 250-byte packets: nothing until the bucket is full again (100 B), then one datagram goes into debt.
    expect(p.allowance(1151.5, 250)).toBe(0);
    expect(p.waitMs(1151.5, 250)).toBeCloseTo(98.5, 5); // 1.5 B of credit, full at 100 B
    expect(p.allowance(1251, 250)).toBe(100);
    // Asking for 60-byte packets: nothing until 60 B of credit.
    p.consume(100, 1);
    expect(p.allowance(1251, 60)).toBe(0);
    expect(p.waitMs(1251, 60)).toBeCloseTo(60, 5);
    expect(p.allowance(1311.5, 60)).toBe(60);
  });

  test("default burst is DEFAULT_BURST_MS of the rate", () => {
    const bps = 1e9;
    const p = new Pacer({ bitsPerSecond: bps }, () => 0);
    expect(p.allowance(0)).toBe(Math.floor((bps / 8) * (DEFAULT_BURST_MS / 1000)));
    const q = new Pacer({ packetsPerSecond: 1e5 }, () => 0);
    expect(q.allowance(0, 1)).toBe(1e5 * (DEFAULT_BURST_MS / 1000));
    // Tiny rates still allow one unit.
    expect(new Pacer({ bitsPerSecond: 8 }, () => 0).allowance(0)).toBe(1);
    expect(new Pacer({ packetsPerSecond: 1 }, () => 0).allowance(0, 100)).toBe(100);
  });

  test("the injected clock is used when no time is passed", () => {
    let t = 0;
    const p = new Pacer({ bitsPerSecond: 8000, burstBytes: 10 }, () => t);
    p.consume(p.allowance(), 1);
    expect(p.allowance()).toBe(0);
    expect(p.waitMs()).toBeCloseTo(1, 5);
    t = 5;
    expect(p.allowance()).toBe(5);
  });

  test("long-run average equals the bit rate within 0.1 %", () => {
    for (const [bps, size] of [
      [1e6, 1470],
      [1048576, 32768], // iperf3's UDP default: one datagram every 250 ms, bigger than the bucket
      [100e6, 1470],
      [10e9, 65507],
      [12345, 100],
    ] as const) {
      // Long enough for 5000 datagrams, so the initial burst and the last datagram weigh < 0.1 %.
      const seconds = Math.max(20, (5000 * size * 8) / bps);
      const r = run(new Pacer({ bitsPerSecond: bps }, () => 0), size, seconds * 1000);
      expect(Math.abs((r.bytes * 8) / seconds / bps - 1)).toBeLessThan(0.001);
    }
  });

  test("burst is bounded after an idle period", () => {
    const burst = 50_000;
    const size = 1470;
    const p = new Pacer({ bitsPerSecond: 1e8, burstBytes: burst }, () => 0);
    p.allowance(0);
    // Idle for 10 s, then send as fast as allowed without the clock moving.
    let bytes = 0;
    for (let i = 0; i < 1000; i++) {
      const n = sendDatagrams(p, 10_000, size);
      if (n === 0) break;
      bytes += n * size;
    }
    // Whole datagrams that fit in the bucket; nothing beyond it.
    expect(bytes).toBe(Math.floor(burst / size) * size);
    expect(p.waitMs(10_000, size)).toBeGreaterThan(0);
    // Datagrams bigger than the bucket: exactly one goes, in debt.
    const q = new Pacer({ bitsPerSecond: 1e8, burstBytes: 1000 }, () => 0);
    expect(sendDatagrams(q, 10_000, size)).toBe(1);
    expect(sendDatagrams(q, 10_000, size)).toBe(0);
  });

  test("TCP-style partial writes never exceed the allowance, come in bucket-sized pieces, and are exact", () => {
    const cap = 64 * 1024;
    const p = new Pacer({ bitsPerSecond: 80e6, burstBytes: cap }, () => 0); // 10 MB/s = 10 000 B/ms
    let now = 0;
    let bytes = 0;
    let smallest = Infinity;
    while (now < 5000) {
      const allowed = p.allowance(now, 131072);
      if (allowed <= 0) {
        now += p.waitMs(now, 131072);
        continue;
      }
      const n = Math.min(131072, allowed);
      smallest = Math.min(smallest, n);
      p.consume(n, 1);
      bytes += n;
    }
    // A 128 KiB write is bigger than the 64 KiB bucket, so each write is one full bucket.
    expect(smallest).toBe(cap);
    // Everything earned until the clock stopped plus the initial full bucket, minus what is still in the bucket
    // (at most one bucket); the only other loss is the nanosecond wake margin each time the bucket fills up.
    expect(bytes).toBeLessThanOrEqual(cap + 10_000 * now);
    expect(Math.abs(bytes / (10_000 * now) - 1)).toBeLessThan(1e-6);
  });

  test("no drift over 1e6 steps, also with late wake-ups", () => {
    const bps = 8e6; // 1000 B/ms
    const size = 1000; // so one datagram per ms
    const burst = 20_000;
    let seed = 12345;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648) * 5; // 0..5 ms late
    for (const late of [() => 0, rnd]) {
      const p = new Pacer({ bitsPerSecond: bps, burstBytes: burst }, () => 0);
      const r = run(p, size, 1e6, late); // 1e6 ms = one million datagram times
      expect(r.packets).toBeGreaterThanOrEqual(1e6);
      // Credit earned = burst + 1000 B/ms · elapsed; the sender is never idle long enough (5 ms < 20 ms of burst)
      // to overflow the bucket, so it must have sent all of it, give or take the last datagram and wake-up.
      const earned = burst + 1000 * r.now;
      expect(r.bytes).toBeLessThanOrEqual(earned + size);
      expect(r.bytes).toBeGreaterThanOrEqual(earned - 6 * 1000);
    }
  });

  test("packets/s limit", () => {
    const pps = 1000;
    const seconds = 20;
    const r = run(new Pacer({ packetsPerSecond: pps }, () => 0), 100, seconds * 1000);
    expect(Math.abs(r.packets / seconds / pps - 1)).toBeLessThan(0.001);
    // Strict: never more than whole packet tokens.
    const p = new Pacer({ packetsPerSecond: 1000, burstPackets: 3 }, () => 0);
    expect(p.allowance(0, 1470)).toBe(3 * 1470);
    p.consume(3 * 1470, 3);
    expect(p.allowance(0, 1470)).toBe(0);
    expect(p.waitMs(0, 1470)).toBeCloseTo(1, 5);
    expect(p.allowance(0.5, 1470)).toBe(0);
    expect(p.allowance(1.0001, 1470)).toBe(1470);
  });

  test("combined limits: the tighter one wins", () => {
    const seconds = 20;
    // 8 Mbit/s = 1e6 B/s. With 100-byte packets the byte limit allows 10 000 pps, so 5000 pps binds.
    const a = run(new Pacer({ bitsPerSecond: 8e6, packetsPerSecond: 5000 }, () => 0), 100, seconds * 1000);
    expect(Math.abs(a.packets / seconds / 5000 - 1)).toBeLessThan(0.001);
    // With 1000-byte packets the byte limit allows 1000 pps, below 5000 pps.
    const b = run(new Pacer({ bitsPerSecond: 8e6, packetsPerSecond: 5000 }, () => 0), 1000, seconds * 1000);
    expect(Math.abs((b.bytes * 8) / seconds / 8e6 - 1)).toBeLessThan(0.001);
    // Allowance reports the smaller of the two.
    const p = new Pacer({ bitsPerSecond: 8000, burstBytes: 500, packetsPerSecond: 10, burstPackets: 2 }, () => 0);
    expect(p.allowance(0, 100)).toBe(200); // 2 packet tokens × 100 B < 500 B of credit
    expect(p.allowance(0, 1000)).toBe(500); // byte credit < 2 × 1000 B
    p.consume(200, 2);
    expect(p.allowance(0, 100)).toBe(0);
    expect(p.waitMs(0, 100)).toBeCloseTo(100, 5); // next packet token after 1/10 s; bytes are still available
  });

  test("bad options are refused", () => {
    expect(() => new Pacer({ bitsPerSecond: -1 })).toThrow(RangeError);
    expect(() => new Pacer({ bitsPerSecond: NaN })).toThrow(RangeError);
    expect(() => new Pacer({ packetsPerSecond: Infinity })).toThrow(RangeError);
    expect(() => new Pacer({ bitsPerSecond: 1e6, burstBytes: 0.5 })).toThrow(RangeError);
    expect(() => new Pacer({ packetsPerSecond: 10, burstPackets: 0 })).toThrow(RangeError);
  });

  test("a clock stepping back does not take credit away or add it", () => {
    const p = new Pacer({ bitsPerSecond: 8000, burstBytes: 100 }, () => 0);
    p.consume(100, 1);
    expect(p.allowance(50)).toBe(50);
    expect(p.allowance(10)).toBe(50);
  });
});

test("initial credit: one unit at once, then exactly the rate", () => {
  let now = 0;
  const p = new Pacer({ bitsPerSecond: 8000, burstBytes: 100, initialBytes: 1 }, () => now);
  expect(p.allowance(0, 1)).toBe(1);
  p.consume(1, 1);
  expect(p.allowance(0, 1)).toBe(0);
  expect(p.waitMs(0, 1)).toBeCloseTo(1, 4);
  now = 50;
  expect(p.allowance(now, 1)).toBe(50);
  const full = new Pacer({ packetsPerSecond: 1000, burstPackets: 10, initialPackets: 1 }, () => 0);
  expect(full.allowance(0, 1)).toBe(1);
  now = 1000;
  expect(p.allowance(now, 1)).toBe(100);
});
