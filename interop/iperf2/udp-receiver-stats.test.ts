import { describe, expect, test } from "bun:test";
import { UdpReceiverStats } from "./udp-receiver-stats.ts";

/** Feeds seqs with a fixed 1 ms spacing and a constant transit of `transit` seconds. */
function feed(seqs: number[], transit = 0.00002, len = 1470): UdpReceiverStats {
  const s = new UdpReceiverStats();
  seqs.forEach((seq, i) => s.add(seq, 1000 + i * 0.001, 1000 + i * 0.001 + transit, len));
  return s;
}
const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => a + i);

describe("UDP receiver accounting (iperf 2 rules)", () => {
  test("92 data datagrams and FIN -93: 93 datagrams, 93 x 1470 bytes, nothing lost (as in iperf2-udp.txt)", () => {
    const s = feed([...range(1, 92), -93]);
    const r = s.report(false);
    expect(r.datagrams).toBe(93);
    expect(r.totalBytes).toBe(136710);
    expect(r.lost).toBe(0);
    expect(r.outOfOrder).toBe(0);
    expect(r.duration).toBeCloseTo(0.092, 9);
  });

  test("ids 10-14 skipped, FIN -51: 5 lost of 51 (the spec's experiment)", () => {
    const s = feed([...range(1, 9), ...range(15, 50), -51]);
    expect([s.lost, s.datagrams, s.outOfOrder]).toEqual([5, 51, 0]);
  });

  test("ids 20 and 21 swapped: one out of order, none lost", () => {
    const seqs = range(1, 50);
    [seqs[19], seqs[20]] = [seqs[20]!, seqs[19]!];
    const s = feed([...seqs, -51]);
    expect([s.lost, s.outOfOrder, s.datagrams]).toEqual([0, 1, 51]);
  });

  test("a repeated datagram is a duplicate, not a repaid loss", () => {
    const s = feed([1, 2, 3, 3, 4, -5]);
    expect([s.lost, s.outOfOrder, s.duplicates]).toEqual([0, 0, 1]);
  });

  test("retransmitted FINs after the first change nothing", () => {
    const s = feed([1, 2, -3]);
    expect(s.add(-4, 2000, 2000, 1470)).toBe(false);
    expect([s.packets, s.datagrams]).toEqual([3, 3]);
  });

  test("jitter: 0 for constant transit; RFC 1889 running mean of |D| otherwise", () => {
    expect(feed(range(1, 100)).jitter).toBe(0);
    const s = new UdpReceiverStats();
    // transits alternate 0 / 1 ms: every |D| is 1 ms, so J_n = 1ms * (1 - (15/16)^(n-1))
    for (let i = 0; i < 10; i++) s.add(i + 1, i, i + (i % 2) * 0.001, 100);
    expect(s.jitter).toBeCloseTo(0.001 * (1 - (15 / 16) ** 9), 12);
  });

  test("latency: min/max/mean, and M2 in us^2 so sqrt(m2/(n-1)) is the stdev in microseconds", () => {
    const s = new UdpReceiverStats();
    const transits = [0.00001, 0.00002, 0.00003, 0.00004];
    transits.forEach((t, i) => s.add(i + 1, i, i + t, 100));
    const l = s.latency();
    expect(l.minTransit).toBeCloseTo(0.00001, 12);
    expect(l.maxTransit).toBeCloseTo(0.00004, 12);
    expect(l.meanTransit).toBeCloseTo(0.000025, 12);
    expect(Math.sqrt(l.m2Transit / 3)).toBeCloseTo(12.909944, 5);
    expect(l.transitCount).toBe(4);
  });

  test("report flags: valid + 64-bit seq, plus extend for an -e server", () => {
    expect(feed([1, -2]).report(false).flags).toBe(0x88000000);
    expect(feed([1, -2]).report(true).flags).toBe(0xc8000000);
  });
});
