/**
 * Our `iperf -c -u -n N` against the stock servers: the test ends on its amount and the server's report comes back,
 * as to a stock client. Ours ended its stream before the FIN exchange, so it printed "WARNING: did not receive ack
 * of last datagram" where stock prints the Server Report.
 */
import { describe, expect, test } from "bun:test";
import { iperf2Peers } from "../support/stock-peers.ts";
import { oursMain, withStockServer } from "./iperf2-harness.ts";

for (const peer of iperf2Peers()) {
  describe(`anyperf iperf -c -u -n against ${peer.label}`, () => {
    for (const [label, extra] of [["-b 10m", ["-b", "10m"]], ["--isochronous", ["--isochronous"]]] as const) {
      test.skipIf(peer.version === undefined)(`${label}: 100 KBytes sent, the server's report of them printed`, async () => {
        await withStockServer(peer, ["-s", "-u"], "udp", [28170, 28190], async (port) => {
          const c = oursMain(["-c", "127.0.0.1", "-u", "-p", String(port), "-n", "100K", ...extra]);
          const r = await c.done;
          expect(r.code, r.out).toBe(0);
          expect(r.out).not.toContain("WARNING");
          // The last datagram carries what is left of the amount, as stock's (69 of 1470 bytes, one of 970, the FIN):
          // 101 KBytes both ends. Ours sent it whole (102).
          expect(r.out, r.out).toMatch(/\] 0\.0000-0\.\d+ sec {3}101 KBytes .*\n\[ {2}1\] Sent 7\d datagrams\n\[ {2}1\] Server Report:\n/);
          expect(r.out).toMatch(/\] 0\.0000-0\.\d+ sec {3}101 KBytes .* 0\/7\d \(0%\)/);
        });
      }, 30_000);
    }
  });
}
