/**
 * Our `iperf -c --tcp-write-times` and `--histograms` (refused before): every write is timed in the Worker that makes
 * it; the lines carry 2.1.8's "write-times avg/min/max/stdev (cnt)" column, and with --histograms each is followed
 * by its "W8-PDF" line (the final one "W8(f)-PDF"), against the 2.1.8, 2.2.1 and our servers alike (the server
 * sees a plain stream: these are the client's own).
 */
import { describe, expect, test } from "bun:test";
import { iperf2Peers } from "../support/stock-peers.ts";
import { freePorts } from "../support/processes.ts";
import { oursMain, session, stockPeer } from "./iperf2-harness.ts";

const servers = [
  ...iperf2Peers().map((p) => ({ label: p.label, runs: p.version !== undefined, start: (port: number) => stockPeer(p)(["-s", "-p", String(port)]) })),
  { label: "anyperf iperf -s", runs: true, start: (port: number) => oursMain(["-s", "-p", String(port)]) },
];

/** "... 10/0 ... 0.128/0.097/0.254/0.051 ms (10)" → writes and the write-times figures. */
function writeLines(out: string): { start: number; writes: number; avgMs: number; minMs: number; maxMs: number; cnt: number }[] {
  return [...out.matchAll(/\]\s+([\d.]+)-[\d.]+ sec .* (\d+)\/0 .* ([\d.]+)\/([\d.]+)\/([\d.]+)\/[\d.]+ ms \((\d+)\)$/gm)].map((m) => ({
    start: Number(m[1]),
    writes: Number(m[2]),
    avgMs: Number(m[3]),
    minMs: Number(m[4]),
    maxMs: Number(m[5]),
    cnt: Number(m[6]),
  }));
}

for (const srv of servers) {
  describe(`anyperf iperf -c --tcp-write-times / --histograms against ${srv.label}`, () => {
    test.skipIf(!srv.runs)("-t 2 -i 1 -b 10m: each line times its writes; --histograms adds each one's PDF line", async () => {
      const port = freePorts(28060, 28080, 1);
      const args = ["-c", "127.0.0.1", "-p", String(port), "-t", "2", "-i", "1", "-b", "10m"];
      const a = await session(srv.start(port), /Server listening/, () => oursMain([...args, "--tcp-write-times"]), 20_000);
      expect(a.client.code, a.client.out).toBe(0);
      expect(a.client.out).toContain("Write buffer size: 131072 Byte (writetimer-enabled)");
      expect(a.client.out).toContain("Cwnd/RTT        NetPwr  write-times avg/min/max/stdev (cnt)");
      const lines = writeLines(a.client.out);
      // Two intervals and the final line; 10 Mbit/s of 128 KiB writes is 9.5 a second.
      expect(lines.length, a.client.out).toBe(3);
      for (const l of lines) {
        expect(l.cnt, a.client.out).toBeGreaterThanOrEqual(Math.max(1, l.writes - 1));
        expect(l.cnt).toBeLessThanOrEqual(l.writes);
        expect(l.minMs).toBeGreaterThan(0);
        expect(l.minMs).toBeLessThanOrEqual(l.avgMs);
        expect(l.avgMs).toBeLessThanOrEqual(l.maxMs);
      }
      expect(a.client.out).not.toContain("-PDF");

      const b = await session(srv.start(port), /Server listening/, () => oursMain([...args, "--histograms"]), 20_000);
      expect(b.client.code, b.client.out).toBe(0);
      expect(b.client.out).toContain("Enabled write histograms bin-width=0.100 ms, bins=10000");
      const pdf = [...b.client.out.matchAll(/^\[\s+1\] ([\d.]+)-[\d.]+ sec (W8|W8\(f\))-PDF: bin\(w=100us\):cnt\((\d+)\)/gm)];
      expect(pdf.map((m) => m[2]), b.client.out).toEqual(["W8", "W8", "W8(f)"]);
      // Each PDF line counts the writes its line above timed.
      expect(pdf.map((m) => Number(m[3]))).toEqual(writeLines(b.client.out).map((l) => l.cnt));
    }, 60_000);
  });
}
