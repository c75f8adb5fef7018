/**
 * A 2.2 client's --tcp-write-prefetch with -R asks the server's sender for TCP_NOTSENT_LOWAT (2.2.1's listener sets
 * it). Ours now sets it on the socket it sends on, read back from our server's own descriptor (pidfd_getfd).
 */
import { describe, expect, test } from "bun:test";
import { iperf2Peers } from "../support/stock-peers.ts";
import { freePorts } from "../support/processes.ts";
import { peerSocketInts } from "../support/peer-socket.ts";
import { oursMain, stockPeer, waitFor } from "./iperf2-harness.ts";

const IPPROTO_TCP = 6;
const TCP_NOTSENT_LOWAT = 25;

// 2.1.8 has the option for its own writes and sends nothing of it.
for (const peer of iperf2Peers().filter((p) => !p.version?.startsWith("2.1"))) {
  describe(`stock ${peer.label} client --tcp-write-prefetch 16K -R against anyperf iperf -s`, () => {
    test.skipIf(peer.version === undefined)("our sending socket has TCP_NOTSENT_LOWAT 16384; the test ends on its -t", async () => {
      const port = freePorts(28100, 28120, 1);
      const srv = oursMain(["-s", "-p", String(port)]);
      try {
        await waitFor(srv, /Server listening/, 30_000);
        const client = stockPeer(peer)(["-c", "127.0.0.1", "-p", String(port), "-t", "3", "-R", "--tcp-write-prefetch", "16K", "-b", "50m"]);
        await waitFor(client, /connected with/, 20_000);
        let lowat: number[] = [];
        for (let i = 0; i < 40 && lowat.length === 0; i++) {
          await Bun.sleep(100);
          lowat = await peerSocketInts(srv.pid, (local) => local === port, IPPROTO_TCP, TCP_NOTSENT_LOWAT);
        }
        const f = await client.done;
        expect(f.code, f.out).toBe(0);
        expect(lowat).toEqual([16_384]);
      } finally {
        srv.kill();
        await srv.done;
      }
    }, 60_000);
  });
}
