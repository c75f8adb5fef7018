/**
 * A stream whose peer's data and FIN are all there before the Worker has reported it open (stock `iperf -c -n 10M`
 * on loopback, `--connect-only`) ended before its "opened" reached the main thread: the server printed "stream 0
 * ended before it was set up" and no report (5 of 15 runs on a loaded host), and a client's -d connect-back died with
 * a stack trace. Such a stream was set up and ran: its report is printed like any other.
 *
 * `--connect-only` opens connection after connection (thousands in its -t) and closes each before a byte: a stock
 * server reports none of them. Ours printed a zero-byte report for each, and handed each to a Worker after the
 * socket was gone ("dup failed: EBADF"); a connection closed before its first byte is no test.
 */
import { expect, test } from "bun:test";
import { csv, oursMain, stockPeer, waitListening } from "./iperf2-harness.ts";
import { freePorts } from "../support/processes.ts";
import { iperf2Peers } from "../support/stock-peers.ts";

const RUNS = 6;

for (const peer of iperf2Peers()) {
  test.skipIf(peer.version === undefined)(`${peer.label} -n 10M and --connect-only against anyperf iperf -s: every test is reported, nothing else`, async () => {
    const port = freePorts(27950, 27990, 1);
    const srv = oursMain(["-s", "-p", String(port), "-y", "C"]);
    try {
      await waitListening(port, "tcp", 30_000);
      for (let i = 0; i < RUNS; i++) {
        const c = await stockPeer(peer)(["-c", "127.0.0.1", "-p", String(port), "-n", "10M"]).done;
        expect(c.code, c.out).toBe(0);
      }
      const c = await stockPeer(peer)(["-c", "127.0.0.1", "-p", String(port), "--connect-only", "-t", "1"]).done;
      expect(c.code, c.out).toBe(0);
      expect(c.out).toContain("connected with");
      await Bun.sleep(500);
      const out = srv.text();
      expect(out).not.toContain("before it was set up");
      expect(out).not.toContain("anyperf iperf:");
      // Each -n 10M test's final line carries its 10 MiB and the header; the connect-only connections none.
      const lines = csv(out);
      expect(lines.filter((l) => l.bytes >= 10 * 1024 * 1024), out).toHaveLength(RUNS);
      expect(lines, out).toHaveLength(RUNS);
    } finally {
      srv.kill();
      await srv.done;
    }
  }, 120_000);
}
