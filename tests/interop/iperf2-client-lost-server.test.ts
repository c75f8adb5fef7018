/**
 * `anyperf iperf -c` against a server SIGKILLed mid-test, as the stock 2.1.8 client behaves: its figures up to the
 * drop (the partial interval, then the final line), "write failed: Connection reset by peer" (or "Broken pipe") on
 * stderr, exit 0. Before, ours said nothing of the drop. Only stderr's line differs by server: whichever errno the
 * kernel gave our write. Paced (-b), our writer runs on the event loop, where the server's FIN used to close the
 * socket quietly: it now stays open for writing (half-open), so the next writes meet the reset as stock's do.
 */
import { describe, expect, test } from "bun:test";
import { iperf2Peers } from "../support/stock-peers.ts";
import { freePorts } from "../support/processes.ts";
import { oursMain, stockPeer, waitFor, type Proc } from "./iperf2-harness.ts";

const KILL_AFTER_MS = 1_500;

const servers = [
  ...iperf2Peers().map((p) => ({ label: p.label, runs: p.version !== undefined, start: (port: number) => stockPeer(p)(["-s", "-p", String(port)]) })),
  { label: "anyperf iperf -s", runs: true, start: (port: number) => oursMain(["-s", "-p", String(port)]) },
];

function sigkill(p: Proc): void {
  process.kill(p.pid, "SIGKILL");
}

for (const srv of servers) {
  describe(`anyperf iperf -c, ${srv.label} killed mid-test`, () => {
    test.skipIf(!srv.runs).each([[[] as string[]], [["-b", "100m"]]])("-t 4 -i 1 %p: the figures to the drop, 'write failed: ...' on stderr, exit 0", async (extra) => {
      const port = freePorts(28000, 28020, 1);
      const server = srv.start(port);
      try {
        await waitFor(server, /Server listening/, 30_000);
        const client = oursMain(["-c", "127.0.0.1", "-p", String(port), "-t", "4", "-i", "1", ...extra]);
        // Counted from the client's first interval line: its start (from source) can take seconds on a loaded host.
        await waitFor(client, /\] 0\.0+-1\.0+ sec/, 30_000);
        setTimeout(() => sigkill(server), KILL_AFTER_MS - 1000);
        const f = await client.done;
        expect(f.code, f.out).toBe(0);
        expect(f.out).toMatch(/^write failed: (Connection reset by peer|Broken pipe)$/m);
        const final = /\] 0\.0000-(\d+\.\d+) sec\s+[\d.]+ [MG]Bytes/.exec(f.out.split("\n").filter((l) => /\] 0\.0000-/.test(l)).at(-1) ?? "");
        expect(final, f.out).not.toBeNull();
        expect(Number(final![1])).toBeLessThan(3);
        // The interval the drop cut short, before the final line.
        expect(f.out).toMatch(/\] 1\.0000-1\.\d+ sec/);
      } finally {
        server.kill();
        await server.done;
      }
    }, 60_000);
  });
}
