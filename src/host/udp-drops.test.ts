import { describe, expect, test } from "bun:test";
import { createUdpDropsReader } from "./udp-drops.ts";

describe.skipIf(process.platform !== "linux")("createUdpDropsReader (live /proc/net/udp)", () => {
  test("a bound port reads a count, an unbound one is unknown", async () => {
    const sock = await Bun.udpSocket({ hostname: "127.0.0.1", port: 0 });
    const reader = createUdpDropsReader()!;
    try {
      expect(reader.drops(sock.port)).toBe(0);
      sock.close();
      expect(reader.drops(sock.port)).toBeUndefined();
    } finally {
      sock.close();
      reader.close();
    }
  });
});
