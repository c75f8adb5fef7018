/**
 * A stock client's --txstart-time on our server. 2.1.8's header flags the start time (epoch-start bit, time at 64):
 * the connection line notes "(epoch-start)" and the stream's clock starts at that time, as the 2.1.8 server prints
 * it (the wait is no interval). Before, ours counted from the accept: a first interval of 80 bytes and a final line
 * seconds longer than the test. 2.2.1's client sets no such bit (it holds its writes itself) and the 2.2.1 server
 * counts from the accept, wait included: so does ours.
 */
import { describe, expect, test } from "bun:test";
import { iperf2Peers } from "../support/stock-peers.ts";
import { freePorts } from "../support/processes.ts";
import { oursMain, session, stockPeer } from "./iperf2-harness.ts";

for (const peer of iperf2Peers()) {
  describe(`stock ${peer.label} client --txstart-time against anyperf iperf -s -i 1`, () => {
    test.skipIf(peer.version === undefined)("1-2 s ahead, -t 1.5: the server's clock as the stock server of that version runs it", async () => {
      const port = freePorts(28040, 28060, 1);
      const flagged = peer.version?.startsWith("2.1") === true;
      const r = await session(oursMain(["-s", "-p", String(port), "-i", "1"]), /Server listening/, () => {
        const start = String(Math.floor(Date.now() / 1000) + 2);
        return stockPeer(peer)(["-c", "127.0.0.1", "-p", String(port), "-t", "1.5", "-b", "10m", "-l", "1000", "--txstart-time", start]);
      }, 20_000);
      expect(r.client.code, r.client.out).toBe(0);
      const line = /connected with 127\.0\.0\.1 port \d+ (\(epoch-start\) )?\(icwnd/.exec(r.server);
      expect(line, r.server).not.toBeNull();
      expect(line![1] !== undefined, r.server).toBe(flagged);
      const final = r.server.split("\n").filter((l) => /\] 0\.0000-\d/.test(l)).at(-1)!;
      const end = Number(/0\.0000-(\d+\.\d+) sec/.exec(final)![1]);
      if (flagged) {
        // 10 Mbit/s for the whole first second: about 1.19 MBytes, not the header alone; the final line the test's 1.5 s.
        expect(/\] 0\.0000-1\.0000 sec\s+[\d.]+ MBytes/.test(r.server), r.server).toBe(true);
        expect(end, r.server).toBeGreaterThan(1.3);
        expect(end, r.server).toBeLessThan(1.8);
      } else {
        // The wait (over a second) and the 1.5 s test.
        expect(end, r.server).toBeGreaterThan(2.3);
      }
    }, 60_000);
  });
}
