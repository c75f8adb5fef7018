import { describe, expect, test } from "bun:test";
import { pathFields, samplesKept, tcpPath, type TcpSample } from "./tcp-path.ts";
import type { TcpInfo } from "../sockopt/tcp-info.ts";

/** One read a second from t0: busy_time etc. grow by the given µs per second; delivery_rate in bytes/s. */
function series(t0: number, n: number, per: { busy: number; rwnd: number; sndbuf: number }, rate: (i: number) => number, extra: Partial<TcpInfo> = {}): TcpSample[] {
  return Array.from({ length: n }, (_, i) => ({
    atMs: t0 + i * 1000,
    info: { state: 1, busy_time: per.busy * i, rwnd_limited: per.rwnd * i, sndbuf_limited: per.sndbuf * i, delivery_rate: rate(i), rtt_us: 3000 + i, min_rtt: 8, ...extra },
  }));
}

describe("tcpPath", () => {
  test("one stream: the reads bracketing the window, the median delivery rate inside it", () => {
    // Reads at 0..10 s; window 1.5..8.5 s: bracketed by the reads at 1 s and 9 s (8 s, busy 8 × 0.9 s).
    const s = series(0, 11, { busy: 900_000, rwnd: 100_000, sndbuf: 50_000 }, (i) => (i === 4 ? 1e9 : 37_500_000));
    expect(tcpPath([s], 1500, 8500)).toEqual({
      streams: 1,
      elapsed_us: 8_000_000,
      busy_us: 7_200_000,
      rwnd_limited_us: 800_000,
      sndbuf_limited_us: 400_000,
      delivery_bps: 300e6,
      delivery_app_limited: false,
      srtt_us: 3005,
      min_rtt_us: 8,
    });
  });

  test("streams sum their delivery rates (they share the bottleneck); app-limited reads count only when all are", () => {
    const a = series(0, 5, { busy: 1e6, rwnd: 0, sndbuf: 0 }, () => 18_750_000);
    const b = series(0, 5, { busy: 1e6, rwnd: 0, sndbuf: 0 }, (i) => (i % 2 ? 18_750_000 : 1_000_000)).map((x, i) => ({ ...x, info: { ...x.info, delivery_rate_app_limited: i % 2 === 0 } }));
    const p = tcpPath([a, b], 0, 4000)!;
    expect(p.streams).toBe(2);
    expect(p.delivery_bps).toBe(300e6);
    expect(p.delivery_app_limited).toBe(false);
    const paced = series(0, 5, { busy: 2e5, rwnd: 0, sndbuf: 0 }, () => 12_500_000, { delivery_rate_app_limited: true });
    expect(tcpPath([paced], 0, 4000)).toMatchObject({ delivery_bps: 100e6, delivery_app_limited: true, busy_us: 800_000, elapsed_us: 4_000_000 });
  });

  test("nothing to say: no reads, one read, a counter that went back (a new socket), no chrono stats", () => {
    expect(tcpPath([], 0, 1000)).toBeUndefined();
    expect(tcpPath([series(0, 1, { busy: 1, rwnd: 0, sndbuf: 0 }, () => 1)], 0, 1000)).toBeUndefined();
    const back = series(0, 3, { busy: 1e6, rwnd: 0, sndbuf: 0 }, () => 1).reverse().map((x, i) => ({ ...x, atMs: i * 1000 }));
    expect(tcpPath([back], 0, 2000)).toBeUndefined();
    const old = series(0, 3, { busy: 1e6, rwnd: 0, sndbuf: 0 }, () => 1).map((x) => ({ atMs: x.atMs, info: { state: 1, rtt_us: 40 } }));
    expect(tcpPath([old], 0, 2000)).toBeUndefined();
  });
});

describe("what a plane keeps", () => {
  test("an hour for one stream, 200 s each for a thousand, never under 16", () => {
    expect(samplesKept(1)).toBe(3600);
    expect(samplesKept(1000)).toBe(200);
    expect(samplesKept(100_000)).toBe(16);
  });
  test("only the fields the path reads; absent ones stay absent", () => {
    const info: TcpInfo = { state: 1, rtt_us: 40, snd_cwnd: 10, busy_time: 5, rwnd_limited: 1, sndbuf_limited: 0, delivery_rate: 9, delivery_rate_app_limited: false, min_rtt: 8, total_retrans: 3 };
    const kept = pathFields(info);
    expect(kept).toMatchObject({ state: 1, rtt_us: 40, busy_time: 5, rwnd_limited: 1, sndbuf_limited: 0, delivery_rate: 9, delivery_rate_app_limited: false, min_rtt: 8 });
    expect("snd_cwnd" in kept || "total_retrans" in kept).toBe(false);
  });
});
