/**
 * `anyperf iperf -c --txstart-time EPOCH` against stock `iperf -s -e` (2.1.8 and 2.2.1): the header carries the start
 * time (epoch-start flag, offset 64) and goes out at connect, the first write waits for that time, and both ends
 * print it as the stock pair does. It was refused before.
 */
import { expect, test } from "bun:test";
import { ours, withStockServer } from "./iperf2-harness.ts";
import { iperf2Peers } from "../support/stock-peers.ts";

const TRANSFER = /\[ +1\] 0\.0+-\d\.\d+ sec +([\d.]+ \w+)/;

for (const peer of iperf2Peers()) {
  test.skipIf(!peer.version)(`--txstart-time against ${peer.label}: traffic starts at the epoch time, both ends say so`, async () => {
    await withStockServer(peer, ["-s", "-e"], "tcp", [27500, 27599], async (port, srv) => {
      const startS = Math.floor(Date.now() / 1000) + 3;
      const c = await ours(["-c", "127.0.0.1", "-p", String(port), "--txstart-time", String(startS), "-t", "1"]).done;
      const endedS = Date.now() / 1000;
      expect(c.code, c.out).toBe(0);
      expect(c.out).toMatch(/connected with 127\.0\.0\.1 port \d+ \(epoch-start\)/);
      expect(c.out).toMatch(/\[ +1\] Client traffic to start in [123] seconds at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d current time is /);
      // One second of traffic after the start time, not before it.
      expect(endedS).toBeGreaterThan(startS + 0.9);
      await Bun.sleep(500);
      const s = srv.text();
      expect(s).toContain("(epoch-start)");
      // 2.2.1 says when it starts receiving: only when the start time reached it before the start.
      if (peer.version !== "2.1.8") expect(s).toMatch(/Server receiving to start in [123] seconds/);
      expect(TRANSFER.exec(c.out)?.[1], c.out).toBe(TRANSFER.exec(s)?.[1]);
    });
  }, 60_000);
}
