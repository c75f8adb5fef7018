import { afterAll, describe, expect, test } from "bun:test";
import { DataPlane } from "../../src/engine/data-plane.ts";
import { WorkerPool } from "../../src/engine/worker-pool.ts";
import { loadSockopt } from "../../src/sockopt/sockopt.ts";
import { adoptingListener } from "../support/adopting-listener.ts";
import type { StreamSpecInput } from "../../src/stream-spec.ts";

/**
 * tcp-send with countReceived: one socket that sends and counts what it reads (iperf 2 --full-duplex). The far end is
 * an accepted socket handed to a Worker the way the dialects do it (Sockopt.handOff + adopt), so every byte either
 * side's kernel took must show up in the other side's `received`, and the peer's EOF must end an unlimited sender.
 */

afterAll(() => WorkerPool.shutdown());

const sockopt = await loadSockopt();
if (!sockopt) throw new Error("these tests need Linux glibc under Bun (socket fds for adopt)");

type SendSpec = Omit<Extract<StreamSpecInput, { kind: "tcp-send" }>, "kind" | "id">;

/**
 * A connected pair: `near` connects, `far` adopts the accepted socket (told that `pending` payload bytes were already
 * read before the hand-off); returns both planes once both are open.
 */
async function pair(near: SendSpec, far: SendSpec, pending = 0): Promise<{ a: DataPlane; b: DataPlane }> {
  const listener = adoptingListener(sockopt!, (fd) => ({ kind: "tcp-send", id: 0, adopt: { fd, pending }, ...far }));
  try {
    const a = await DataPlane.open([{ kind: "tcp-send", id: 0, connect: { host: "127.0.0.1", port: listener.port }, ...near }]);
    const b = await listener.plane;
    return { a, b };
  } finally {
    listener.stop(false);
  }
}

const counters = (p: DataPlane) => p.snapshot().streams[0]!;

describe("tcp-send countReceived", () => {
  test("both ends send and read one socket: each reads exactly what the other's kernel took", async () => {
    const { a, b } = await pair(
      { writeSize: 64 * 1024, limitBytes: 8 << 20, end: "fin-wait-eof", countReceived: true },
      { writeSize: 16 * 1024, limitBytes: 3 << 20, end: "fin-wait-eof", countReceived: true },
    );
    a.go();
    b.go();
    await Promise.all([a.ended, b.ended]);
    const [ca, cb] = [counters(a), counters(b)];
    // Whichever end reaches its limit first half-closes; the other's socket closes on that EOF, maybe short of its own.
    expect(ca.bytes === 8 << 20 || cb.bytes === 3 << 20).toBe(true);
    expect(ca.bytes).toBeLessThanOrEqual(8 << 20);
    expect(cb.bytes).toBeLessThanOrEqual(3 << 20);
    expect(cb.received).toBe(ca.bytes);
    expect(ca.received).toBe(cb.bytes);
  }, 20_000);

  test("an unlimited sender ends on the peer's EOF, after counting everything the peer sent", async () => {
    const { a, b } = await pair(
      // a's limit takes ~170 ms at this pace, so b is surely sending before a's FIN.
      { writeSize: 32 * 1024, limitBytes: 4 << 20, rate: { bitsPerSecond: 200e6 }, end: "fin-wait-eof", countReceived: true },
      { writeSize: 32 * 1024, rate: { bitsPerSecond: 200e6 }, end: "fin-wait-eof", countReceived: true },
    );
    const reasons: string[] = [];
    b.onStreamEnd((_, e) => reasons.push(e.reason));
    a.go();
    b.go();
    await Promise.all([a.ended, b.ended]);
    expect(reasons).toEqual(["eof"]);
    expect(counters(b).received).toBe(4 << 20);
    expect(counters(a).received).toBe(counters(b).bytes);
    expect(counters(b).bytes).toBeGreaterThan(0);
  }, 20_000);

  test("stopped by time: the stopping side keeps reading until the peer's FIN, both ends agree", async () => {
    const { a, b } = await pair(
      { writeSize: 32 * 1024, rate: { bitsPerSecond: 100e6 }, end: "fin-wait-eof", countReceived: true },
      { writeSize: 32 * 1024, rate: { bitsPerSecond: 100e6 }, end: "fin-wait-eof", countReceived: true },
    );
    const reasons: string[] = [];
    a.onStreamEnd((_, e) => reasons.push(`a:${e.reason}`));
    b.onStreamEnd((_, e) => reasons.push(`b:${e.reason}`));
    a.go();
    b.go();
    await Bun.sleep(300);
    a.stopStream(0);
    await Promise.all([a.ended, b.ended]);
    expect(reasons.sort()).toEqual(["a:stopped", "b:eof"]);
    expect(counters(a).received).toBe(counters(b).bytes);
    expect(counters(b).received).toBe(counters(a).bytes);
    // 100 Mbit/s for 0.3 s plus 0.1 s of pacing credit: a few MB each way.
    expect(counters(a).bytes).toBeGreaterThan(1e6);
    expect(counters(b).bytes).toBeGreaterThan(1e6);
  }, 20_000);

  test("without countReceived a sender's reads are not counted (the default stays a pure sender)", async () => {
    // Both paced and stopped by time, so both have surely sent before either end closes.
    const { a, b } = await pair(
      { writeSize: 32 * 1024, rate: { bitsPerSecond: 50e6 }, end: "fin-wait-eof" },
      { writeSize: 32 * 1024, rate: { bitsPerSecond: 50e6 }, end: "fin-wait-eof", countReceived: true },
    );
    a.go();
    b.go();
    await Bun.sleep(300);
    a.stopStream(0);
    await Promise.all([a.ended, b.ended]);
    expect(counters(b).received).toBe(counters(a).bytes);
    expect(counters(a).bytes).toBeGreaterThan(0);
    expect(counters(a).received).toBe(0);
    expect(counters(b).bytes).toBeGreaterThan(0);
  }, 20_000);

  test("payload the main thread read before the hand-off counts as received", async () => {
    const { a, b } = await pair(
      { writeSize: 4096, limitBytes: 1 << 20, end: "fin-wait-eof" },
      { writeSize: 4096, limitBytes: 4096, end: "fin-wait-eof", countReceived: true },
      60,
    );
    a.go();
    b.go();
    await Promise.all([a.ended, b.ended]);
    expect(counters(b).received).toBe((1 << 20) + 60);
  }, 20_000);
});
