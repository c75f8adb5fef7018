/**
 * The iperf 2.2-era options a stock client (2.1.8 and 2.2.1) may bring to our server: each test must end on the
 * client's own -t with exit 0 and a final line, never hang (our server once left a --bounceback client blocked for
 * over 10 minutes). Served, not refused: the figures are checked by the dedicated tests; here, that each ends.
 */
import { describe, expect, test } from "bun:test";
import { iperf2Peers } from "../support/stock-peers.ts";
import { freePorts } from "../support/processes.ts";
import { oursMain, stockPeer, waitListening } from "./iperf2-harness.ts";

const OPTIONS: string[][] = [
  ["--trip-times"],
  ["--working-load"],
  ["--isochronous"],
  ["--full-duplex"],
  ["--txstart-time", "NOW+1"],
  ["--connect-only"],
  ["--histograms"],
  ["-u", "--udp-l4s"],
  ["-u", "--isochronous"],
  ["-u", "--trip-times"],
];

for (const peer of iperf2Peers()) {
  describe(`${peer.label} options against our iperf -s`, () => {
    test.skipIf(!peer.version)("each ends within its -t plus a few seconds, exit 0, with a final interval", async () => {
      const port = freePorts(27941, 27959, 1);
      const tcp = oursMain(["-s", "-e", "-p", String(port)]);
      const udp = oursMain(["-s", "-u", "-e", "-p", String(port)]);
      try {
        await waitListening(port, "tcp", 30_000);
        await waitListening(port, "udp", 30_000);
        for (const opts of OPTIONS) {
          const args = opts.map((a) => (a === "NOW+1" ? String(Math.floor(Date.now() / 1000) + 1) : a));
          const started = performance.now();
          const c = stockPeer(peer)(["-c", "127.0.0.1", "-p", String(port), "-e", "-t", "1", ...args]);
          const timer = setTimeout(() => c.kill(), 20_000);
          const done = await c.done;
          clearTimeout(timer);
          const seconds = (performance.now() - started) / 1000;
          const what = `${opts.join(" ")}:\n${done.out}`;
          expect(done.code, what).toBe(0);
          expect(seconds, what).toBeLessThan(opts.includes("--txstart-time") ? 9 : 8);
          expect(done.out, what).toMatch(/\] 0\.0+-\d+\.\d+ sec|final connect times/);
        }
      } finally {
        tcp.kill();
        udp.kill();
        await Promise.all([tcp.done, udp.done]);
      }
    }, 300_000);
  });
}
