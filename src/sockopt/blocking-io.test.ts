import { describe, expect, test } from "bun:test";
import { loadBlockingIo, stampOf } from "./blocking-io.ts";
import { SO_TIMESTAMPNS, SOL_SOCKET } from "./constants.ts";
import { loadSockopt } from "./sockopt.ts";

const io = await loadBlockingIo();
const so = await loadSockopt();
const wallUs = () => (performance.timeOrigin + performance.now()) * 1000;

describe("stampOf", () => {
  const control = (level: number, type: number, sec: bigint, nsec: bigint) => {
    const v = new DataView(new ArrayBuffer(32));
    v.setBigUint64(0, 32n, true);
    v.setInt32(8, level, true);
    v.setInt32(12, type, true);
    v.setBigInt64(16, sec, true);
    v.setBigInt64(24, nsec, true);
    return v;
  };

  test("an SCM_TIMESTAMPNS message gives its time in µs", () => {
    expect(stampOf(control(SOL_SOCKET, SO_TIMESTAMPNS, 1_700_000_000n, 123_456_789n), 0, 32)).toBe(1_700_000_000_123_456.789);
  });

  test("another message, or one cut short, gives 0", () => {
    expect(stampOf(control(0, 8, 1n, 0n), 0, 32)).toBe(0);
    expect(stampOf(control(SOL_SOCKET, SO_TIMESTAMPNS, 1n, 0n), 0, 16)).toBe(0);
  });
});

describe.skipIf(!io || !so)("recvBatch with stamps, on a live loopback socket", () => {
  test("each datagram carries its own kernel arrival, in order, between its send and the read; without the option, 0", async () => {
    const rx = await Bun.udpSocket({ hostname: "127.0.0.1", port: 0 });
    const tx = await Bun.udpSocket({ hostname: "127.0.0.1", port: 0 });
    const fd = so!.dup((rx as unknown as { fd: number }).fd);
    try {
      // Read here before Bun's loop gets a turn: loopback delivers each datagram within its send call.
      so!.setInt(fd, SOL_SOCKET, SO_TIMESTAMPNS, 1);
      const before = wallUs();
      for (let i = 0; i < 3; i++) tx.send(new Uint8Array([i]), rx.port, "127.0.0.1");
      const b = io!.datagramBatch(8, 64, true);
      expect(io!.recvBatch(fd, b)).toBe(3);
      const after = wallUs();
      const got = [...b.arrivals.subarray(0, 3)];
      for (const t of got) {
        expect(t).toBeGreaterThanOrEqual(before - 1000);
        expect(t).toBeLessThanOrEqual(after + 1000);
      }
      expect(got).toEqual([...got].sort((x, y) => x - y));

      so!.setInt(fd, SOL_SOCKET, SO_TIMESTAMPNS, 0);
      tx.send(new Uint8Array([9]), rx.port, "127.0.0.1");
      expect(io!.recvBatch(fd, b)).toBe(1);
      expect(b.arrivals[0]).toBe(0);
    } finally {
      so!.close(fd);
      rx.close();
      tx.close();
    }
  });
});
