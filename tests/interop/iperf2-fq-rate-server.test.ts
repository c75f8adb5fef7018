/**
 * A stock client's --fq-rate asks the server to pace what it sends (-R, -d): the 2.1.8 and 2.2.1 servers set
 * SO_MAX_PACING_RATE on their sending socket. Ours did not (17+ Gbit/s where 50 Mbit/s was asked); now its sending
 * socket is paced, read back from the kernel (`ss`), and the client receives about the rate asked.
 */
import { describe, expect, test } from "bun:test";
import { iperf2Peers } from "../support/stock-peers.ts";
import { freePorts } from "../support/processes.ts";
import { dataSockets } from "../support/ss.ts";
import { csv, oursMain, stockPeer, waitFor } from "./iperf2-harness.ts";

for (const peer of iperf2Peers()) {
  describe(`stock ${peer.label} client --fq-rate 50m against anyperf iperf -s`, () => {
    for (const dir of [["-R"], ["-d"]]) {
      test.skipIf(peer.version === undefined)(`${dir.join(" ")}: our sending socket is paced at 6,250,000 bytes/s and the client receives about 50 Mbit/s`, async () => {
        const port = freePorts(28020, 28040, 1);
        const srv = oursMain(["-s", "-p", String(port)]);
        try {
          await waitFor(srv, /Server listening/, 30_000);
          const client = stockPeer(peer)(["-c", "127.0.0.1", "-p", String(port), "-t", "2", "--fq-rate", "50m", "-y", "C", ...dir]);
          // Our server's sockets that moved data on the test port (-R) or toward the client's own -d listener.
          const sockets = await dataSockets(srv.pid, port, 1_000_000, 20_000, (found) => found.some((s) => s.maxPacing !== undefined));
          const f = await client.done;
          expect(f.code, f.out).toBe(0);
          expect(sockets.map((s) => s.maxPacing).filter((p) => p !== undefined)).toEqual([6_250_000]);
          // The line of what the client received: the stream our server sent on.
          const received = csv(f.out).filter((l) => l.end - l.start > 1.5);
          expect(received.length, f.out).toBeGreaterThan(0);
          const rates = received.map((l) => (l.bytes * 8) / (l.end - l.start));
          expect(Math.min(...rates), f.out).toBeLessThan(75e6);
        } finally {
          srv.kill();
          await srv.done;
        }
      }, 60_000);
    }
  });
}
