/**
 * A client's -S reaches the server in the extended header's TOS field (docs/protocols/iperf2.md §2.2), and stock
 * servers (2.1.8 and 2.2.1: Listener's apply of the client settings) set it on the accepted socket. Ours does too:
 * read back from the kernel with `ss --tos` on our server's data socket while the test runs.
 */
import { expect, test } from "bun:test";
import { iperf2Peers } from "../support/stock-peers.ts";
import { freePorts } from "../support/processes.ts";
import { dataSockets } from "../support/ss.ts";
import { oursMain, stockPeer, waitFor } from "./iperf2-harness.ts";

for (const peer of iperf2Peers()) {
  test.skipIf(peer.version === undefined)(`${peer.label} -S 0x10: our server's socket carries TOS 0x10`, async () => {
    const port = freePorts(27990, 27999, 1);
    const srv = oursMain(["-s", "-p", String(port)]);
    try {
      await waitFor(srv, /Server listening/, 30_000);
      const c = stockPeer(peer)(["-c", "127.0.0.1", "-p", String(port), "-t", "2", "-S", "0x10"]);
      const sockets = await dataSockets(srv.pid, port, 200_000, 10_000, (found) => found.every((s) => s.tos === 0x10));
      const done = await c.done;
      expect(done.code, done.out).toBe(0);
      expect(sockets.map((s) => s.tos)).toEqual([0x10]);
      expect(srv.text()).not.toContain("Attempt to set");
    } finally {
      srv.kill();
      await srv.done;
    }
  }, 60_000);
}
