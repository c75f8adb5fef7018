/**
 * A 2.2 client's `-Z NAME` reaches the server in the header (docs/protocols/iperf2.md §2.2.1) and the stock 2.2.1
 * server sets it on its own socket. Ours now does too: read back from the kernel with `ss` while the test runs
 * (the machine's default is another algorithm).
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { iperf2Peers } from "../support/stock-peers.ts";
import { freePorts } from "../support/processes.ts";
import { oursMain, stockPeer, waitFor } from "./iperf2-harness.ts";

const available = readFileSync("/proc/sys/net/ipv4/tcp_available_congestion_control", "latin1").trim().split(/\s+/);
const fallback = readFileSync("/proc/sys/net/ipv4/tcp_congestion_control", "latin1").trim();
const wanted = available.find((n) => n !== fallback);

for (const peer of iperf2Peers().filter((p) => p.version?.startsWith("2.2"))) {
  test.skipIf(wanted === undefined)(`${peer.label} -Z ${wanted}: our server's socket runs it too`, async () => {
    const port = freePorts(27981, 27989, 1);
    const srv = oursMain(["-s", "-p", String(port)]);
    try {
      await waitFor(srv, /Server listening/, 30_000);
      const c = stockPeer(peer)(["-c", "127.0.0.1", "-p", String(port), "-t", "2", "-Z", wanted!]);
      await Bun.sleep(1000);
      const ss = Bun.spawnSync(["ss", "-tin", "state", "established", `( sport = :${port} )`]).stdout.toString();
      const done = await c.done;
      expect(done.code, done.out).toBe(0);
      expect(ss).toMatch(new RegExp(`\\b${wanted}\\b`));
      expect(ss).not.toMatch(new RegExp(`\\b${fallback}\\b`));
    } finally {
      srv.kill();
      await srv.done;
    }
  }, 60_000);
}
