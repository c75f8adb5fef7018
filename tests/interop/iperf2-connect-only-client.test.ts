/**
 * `anyperf iperf -c --connect-only[=N]` against stock `iperf -s` (2.1.8 and 2.2.1): N handshakes per -P thread, each
 * closed before a byte, one line each with the connect time, and with -e the connect times' summary, as 2.1.8's
 * client prints them; the stock server runs no test for them and serves the next client. It was refused before.
 */
import { expect, test } from "bun:test";
import { ours, stockPeer, withStockServer } from "./iperf2-harness.ts";
import { iperf2Peers } from "../support/stock-peers.ts";

for (const peer of iperf2Peers()) {
  test.skipIf(!peer.version)(`--connect-only=3 -P 2 -e against ${peer.label}: six handshakes, their summary, no test`, async () => {
    await withStockServer(peer, ["-s"], "tcp", [27600, 27699], async (port, srv) => {
      const c = await ours(["-c", "127.0.0.1", "-p", String(port), "--connect-only=3", "-P", "2", "-e"]).done;
      expect(c.code, c.out).toBe(0);
      expect(c.out).toContain("TCP three-way-handshake (3WHS) only");
      const lines = c.out.split("\n").filter((l) => /^\[ +[12]\] local .* connected with 127\.0\.0\.1 port \d+ .*\(ct=\d+\.\d\d ms\) on /.test(l));
      expect(lines, c.out).toHaveLength(6);
      expect(c.out).toMatch(/^\[ CT\] final connect times \(min\/avg\/max\/stdev\) = [\d.]+\/[\d.]+\/[\d.]+\/[\d.]+ ms \(tot\/err\) = 6\/0$/m);
      // The server measured nothing for them, and still serves a plain test.
      const plain = await stockPeer(peer)(["-c", "127.0.0.1", "-p", String(port), "-t", "1"]).done;
      expect(plain.code, plain.out).toBe(0);
      await Bun.sleep(300);
      expect(srv.text().match(/ sec /g), srv.text()).toHaveLength(1);
    });
  }, 60_000);
}
