/**
 * `anyperf iperf -c -u --trip-times` against stock `iperf -s -u` (2.1.8 and 2.2.1): the header's trip-times bit and
 * 92-byte length, and the test's start time at datagram offset 112 as 2.1.8 sends it, so the stock server times each
 * datagram by its send stamp and prints one-way latency, in its own lines and in the report our client prints. It
 * was refused before (and without the start time a stock server ignores the bit).
 */
import { expect, test } from "bun:test";
import { ours, waitFor, withStockServer } from "./iperf2-harness.ts";
import { iperf2Peers } from "../support/stock-peers.ts";

const LATENCY = /\[ +1\] 0\.0+-\d\.\d+ sec +([\d.]+ \w+) .* \d+\/\d+ \(\d+%\) (\d+\.\d+)\/(\d+\.\d+)\/(\d+\.\d+)\/(\d+\.\d+) ms /;

for (const peer of iperf2Peers()) {
  test.skipIf(!peer.version)(`-u --trip-times against ${peer.label}: the server prints one-way latency`, async () => {
    await withStockServer(peer, ["-s", "-u"], "udp", [27700, 27799], async (port, srv) => {
      const c = await ours(["-c", "127.0.0.1", "-u", "-p", String(port), "--trip-times", "-t", "1"]).done;
      expect(c.code, c.out).toBe(0);
      expect(c.out).toMatch(/connected with 127\.0\.0\.1 port \d+ \(trip-times\)/);
      await waitFor(srv, LATENCY, 5_000);
      const s = LATENCY.exec(srv.text())!;
      const r = LATENCY.exec(c.out);
      expect(r, c.out).not.toBeNull();
      // Same bytes on both ends; a latency on loopback well under a second, its min <= avg <= max.
      expect(r![1]).toBe(s[1]!);
      const [avg, min, max] = [Number(s[2]), Number(s[3]), Number(s[4])];
      expect(min).toBeLessThanOrEqual(avg);
      expect(avg).toBeLessThanOrEqual(max);
      expect(max).toBeLessThan(1000);
      expect(max).toBeGreaterThan(0);
    });
  }, 60_000);
}
