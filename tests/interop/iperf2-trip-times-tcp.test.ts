/**
 * Our `iperf -c --trip-times` over TCP (refused before): each write is a burst that opens with its stamped 92-byte
 * header (docs/protocols/iperf2.md §2.7), so the stock 2.1.8 and 2.2.1 servers, and ours, time every burst from
 * its write to its last byte's read and print their "Burst Latency" lines.
 */
import { describe, expect, test } from "bun:test";
import { iperf2Peers } from "../support/stock-peers.ts";
import { freePorts } from "../support/processes.ts";
import { oursMain, session, stockPeer } from "./iperf2-harness.ts";

const servers = [
  ...iperf2Peers().map((p) => ({ label: p.label, runs: p.version !== undefined, start: (port: number) => stockPeer(p)(["-s", "-p", String(port)]) })),
  { label: "anyperf iperf -s", runs: true, start: (port: number) => oursMain(["-s", "-p", String(port)]) },
];

/** The server's final burst line: "0.0000-2.08 sec ... 0.601/0.132/4.872/1.053 ms (20/131076) ...". */
function finalBursts(out: string): { avgMs: number; minMs: number; count: number; size: number } {
  const lines = out.split("\n").filter((l) => /\] 0\.0+-\d+\.\d+ sec .* ms \(\d+\/\d+\)/.test(l));
  const m = /([\d.]+)\/([\d.]+)\/([\d.]+)\/([\d.]+) ms \((\d+)\/(\d+)\)/.exec(lines.at(-1) ?? "");
  if (!m) throw new Error(`no burst latency line in:\n${out}`);
  return { avgMs: Number(m[1]), minMs: Number(m[2]), count: Number(m[5]), size: Number(m[6]) };
}

for (const srv of servers) {
  describe(`anyperf iperf -c --trip-times (TCP) against ${srv.label}`, () => {
    test.skipIf(!srv.runs)("-t 2 -b 10M: the server notes trip-times and times every 128 KiB burst; the client notes it too", async () => {
      const port = freePorts(27940, 27960, 1);
      const r = await session(srv.start(port), /Server listening/, () => oursMain(["-c", "127.0.0.1", "-p", String(port), "--trip-times", "-t", "2", "-b", "10M"]), 20_000);
      expect(r.client.code, r.client.out).toBe(0);
      expect(r.client.out).toMatch(/connected with 127\.0\.0\.1 port \d+ \(trip-times\)/);
      expect(r.server).toContain("(trip-times)");
      const b = finalBursts(r.server);
      // 10 Mbit/s of 128 KiB bursts: 9.5 a second.
      expect(b.count).toBeGreaterThanOrEqual(17);
      expect(b.count).toBeLessThanOrEqual(22);
      // One-way on loopback: well under a second, never negative (a stamp from the wrong place would be either).
      expect(b.minMs).toBeGreaterThan(0);
      expect(b.avgMs).toBeLessThan(500);
    }, 60_000);

    test.skipIf(!srv.runs)("-l 300 -n 1500: five bursts, as 2.1.8's own client sends (its header in the first)", async () => {
      const port = freePorts(27940, 27960, 1);
      const r = await session(srv.start(port), /Server listening/, () => oursMain(["-c", "127.0.0.1", "-p", String(port), "--trip-times", "-l", "300", "-n", "1500"]), 20_000);
      expect(r.client.code, r.client.out).toBe(0);
      expect(finalBursts(r.server).count).toBe(5);
    }, 60_000);
  });
}
