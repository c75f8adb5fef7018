/**
 * `anyperf iperf -c -u --no-udp-fin` against stock `iperf -s -u` (2.1.8 and 2.2.1): the flag drops the report
 * exchange, not the FIN. The stock client still sends one FIN datagram and waits for no report; ours sent none, so the
 * stock server's flow stayed open with no report (and its process would not end on one Ctrl+C).
 */
import { expect, test } from "bun:test";
import { ours, waitFor, withStockServer } from "./iperf2-harness.ts";
import { iperf2Peers } from "../support/stock-peers.ts";

const TRANSFER = / 0\.0+-\d\.\d+ sec +([\d.]+ \w+)/;

for (const peer of iperf2Peers()) {
  test.skipIf(!peer.version)(`-u --no-udp-fin against ${peer.label}: its flow ends and counts what we sent`, async () => {
    await withStockServer(peer, ["-s", "-u"], "udp", [27400, 27499], async (port, srv) => {
      const c = await ours(["-c", "127.0.0.1", "-u", "-p", String(port), "--no-udp-fin", "-t", "1"]).done;
      expect(c.code, c.out).toBe(0);
      // The server's final line for the flow (Lost/Total) comes only once a FIN reached it.
      await waitFor(srv, /\[ +1\] 0\.0+-\d\.\d+ sec .* \d+\/\d+ \(/, 5_000);
      const serverLine = srv.text().split("\n").find((l) => /\[ +1\] 0\.0+-\d\.\d+ sec .* \d+\/\d+ \(/.test(l))!;
      const clientLine = c.out.split("\n").find((l) => /^\[ +1\] 0\.0+-\d\.\d+ sec/.test(l))!;
      expect(TRANSFER.exec(clientLine)![1], c.out).toBe(TRANSFER.exec(serverLine)![1]!);
      // As the stock pair prints it: the client's count includes the FIN, the server's total does not.
      const sent = Number(/Sent (\d+) datagrams/.exec(c.out)![1]);
      expect(sent).toBe(Number(/ \d+\/(\d+) \(/.exec(serverLine)![1]) + 1);
    });
  }, 60_000);
}
