/**
 * Stock `iperf -c --bounceback` (2.1.8 and trixie's 2.2.1) against our `iperf -s` and `serve`'s iperf listener. Our
 * server treated the connection as a plain stream: 2.2.1 reported 0 round trips, 2.1.8 hung. Now each request is
 * answered: the client counts every burst (10 per --bounceback-period), a --bounceback-hold shows in its round-trip
 * times, and it ends within its -t; our server counts both directions, as stock servers do.
 */
import { describe, expect, test } from "bun:test";
import { iperf2Peers } from "../support/stock-peers.ts";
import { freePorts } from "../support/processes.ts";
import { oursMain, session, stockPeer, waitListening } from "./iperf2-harness.ts";
import { TOKEN_OFFSET, serveReady, spawnServe } from "../serve/harness.ts";

/** "10=0.735/0.063/6.508/2.029 ms": count and avg/min/max/stdev of the round trips, from the client's final line. */
function roundTrips(out: string): { count: number; avgMs: number; minMs: number } {
  const finals = out.split("\n").filter((l) => /^\[ +1\] 0\.0+-\d+\.\d+ sec .* \d+=[\d.]+\/[\d.]+\/[\d.]+\/[\d.]+ ms/.test(l));
  const m = /(\d+)=([\d.]+)\/([\d.]+)\//.exec(finals.at(-1) ?? "");
  if (!m) throw new Error(`no bounceback figures in:\n${out}`);
  return { count: Number(m[1]), avgMs: Number(m[2]), minMs: Number(m[3]) };
}

/** The server's closing line for connection `id`: "[  1] 0.0000-1.0010 sec  1.95 KBytes ...". */
const serverBytes = (out: string): string | undefined => /\] 0\.0+-\d+\.\d+ sec +([\d.]+ \w+)/.exec(out)?.[1];

for (const peer of iperf2Peers()) {
  const client = stockPeer(peer);
  describe(`${peer.label} --bounceback`, () => {
    test.skipIf(!peer.version)("against `iperf -s -i 1`: 10 round trips a second, -t kept, both directions counted", async () => {
      const port = freePorts(27961, 27979, 1);
      const started = performance.now();
      const r = await session(oursMain(["-s", "-i", "1", "-p", String(port)]), /Server listening/, () => client(["-c", "127.0.0.1", "-p", String(port), "--bounceback", "-t", "2"]), 20_000);
      const seconds = (performance.now() - started) / 1000;
      expect(r.client.code, r.client.out).toBe(0);
      const rt = roundTrips(r.client.out);
      // Bursts start at 0 and 1 s; 2.1.8 also starts a third at the -t edge, cut short by its timer.
      expect(rt.count).toBeGreaterThanOrEqual(20);
      expect(rt.count).toBeLessThan(30);
      expect(seconds).toBeLessThan(10);
      expect(r.server).toContain("(bb w/quickack len/hold=100/0)");
      // -i 1: lines from 0 and from 1 s (and on) whose bytes add up to the total (where a burst falls varies with load).
      // The last such line is the total.
      const lines = [...r.server.matchAll(/\] (\d)\.0000-(\d\.\d+) sec +([\d.]+) (KBytes|Bytes)/g)];
      const bytesOf = (m: RegExpExecArray | RegExpMatchArray) => Number(m[3]) * (m[4] === "KBytes" ? 1024 : 1);
      const total = lines.at(-1)!;
      expect(total[1]).toBe("0");
      // On a loaded host the client's timer may end while the reply to its last request is in flight: it never counts
      // that trip, which the server (ours, as stock's) answered and counted. Seen: 20 at the client, 21 at the server.
      const serverTrips = Math.round(bytesOf(total) / 200);
      expect([rt.count, rt.count + 1]).toContain(serverTrips);
      expect(Math.abs(bytesOf(total) - serverTrips * 200)).toBeLessThan(10);
      const intervals = lines.slice(0, -1);
      // A client that ends just past 2 s leaves a last sliver "2.0000-2.00xx" after the full second.
      expect(intervals.map((m) => m[1]).slice(0, 2)).toEqual(["0", "1"]);
      expect(Math.abs(intervals.reduce((n, m) => n + bytesOf(m), 0) - serverTrips * 200)).toBeLessThan(10);
    }, 60_000);

    test.skipIf(!peer.version)("--bounceback-hold 2 --bounceback-no-quickack: every round trip takes the 2 ms hold", async () => {
      const port = freePorts(27961, 27979, 1);
      const r = await session(oursMain(["-s", "-p", String(port)]), /Server listening/, () => client(["-c", "127.0.0.1", "-p", String(port), "--bounceback", "--bounceback-hold", "2", "--bounceback-no-quickack", "-t", "1"]), 20_000);
      expect(r.client.code, r.client.out).toBe(0);
      const rt = roundTrips(r.client.out);
      expect(rt.count).toBeGreaterThanOrEqual(10);
      expect(rt.minMs).toBeGreaterThanOrEqual(2);
      expect(r.server).toContain("(bb len/hold=100/2000)");
    }, 60_000);

    test.skipIf(!peer.version?.startsWith("2.2"))("--bounceback-request 200 --bounceback-reply 300 --bounceback-period 0.5: the client reads 300-byte replies", async () => {
      const port = freePorts(27961, 27979, 1);
      const args = ["-c", "127.0.0.1", "-p", String(port), "--bounceback", "--bounceback-request", "200", "--bounceback-reply", "300", "--bounceback-hold", "2", "--bounceback-period", "0.5", "-t", "1"];
      const r = await session(oursMain(["-s", "-p", String(port)]), /Server listening/, () => client(args), 20_000);
      expect(r.client.code, r.client.out).toBe(0);
      expect(roundTrips(r.client.out).count).toBe(20);
      expect(r.client.out).toMatch(/Tx=3\.91 KByte Rx=5\.86 KByte/);
      expect(serverBytes(r.server)).toBe("9.77 KBytes");
      expect(r.server).toContain("(bb w/quickack req/reply/hold=200/300/2000)");
    }, 60_000);

    test.skipIf(!peer.version)("-y C: our server's one CSV line counts both directions, as the stock server's", async () => {
      const port = freePorts(27961, 27979, 1);
      // -y C prints no banner: the port itself says when the server listens.
      const srv = oursMain(["-s", "-y", "C", "-p", String(port)]);
      await waitListening(port, "tcp", 30_000);
      const r = await session(srv, /^/, () => client(["-c", "127.0.0.1", "-p", String(port), "--bounceback", "-t", "1"]), 20_000);
      expect(r.client.code, r.client.out).toBe(0);
      const count = roundTrips(r.client.out).count;
      // The test ends at the client's FIN, which a loaded host may send a few tenths after its 1 s; a request the
      // client sent at its -t edge is answered and counted here, its reply never counted there.
      expect(r.server.trim()).toMatch(new RegExp(`^19700101000000,127\\.0\\.0\\.1,\\d+,127\\.0\\.0\\.1,${port},1,0\\.0-1\\.\\d,(${count * 200}|${(count + 1) * 200}),\\d+$`));
    }, 60_000);

    // A close with a request unread resets the connection, and both stock clients could then block on their read past
    // -t (2.1.8's ignoring SIGTERM): the server half-closes, and each client reads EOF and ends its test.
    test.skipIf(!peer.version)("--max-duration 1 ends a longer bounceback test after its grace, and the client ends too", async () => {
      const port = freePorts(27961, 27979, 1);
      const started = performance.now();
      const r = await session(oursMain(["--max-duration", "1", "-s", "-p", String(port)]), /Server listening/, () => client(["-c", "127.0.0.1", "-p", String(port), "--bounceback", "-t", "30"]), 25_000);
      expect((performance.now() - started) / 1000).toBeLessThan(15);
      expect(r.client.code, r.client.out).toBe(0);
      expect(r.client.out, "the client's final line").toMatch(/\] 0\.0+-[34]\.\d+ sec .* (rps|RPS=\d+)/);
      expect(roundTrips(r.client.out).count).toBeGreaterThanOrEqual(20);
      expect(r.server).toMatch(/ended test from 127\.0\.0\.1 port \d+ after 3 s/);
    }, 60_000);

    test.skipIf(!peer.version)("against `serve`'s iperf listener (shared with ntttcp)", async () => {
      // Ports base (anyperf), base + 1 (ntttcp's Linux sync), base + 2 (iperf and ntttcp data), + TOKEN_OFFSET (Windows sync).
      const base = freePorts(30900, 30999, 3, [TOKEN_OFFSET]);
      const [native, shared] = [base, base + 2];
      const serve = spawnServe(["-p", String(native), "--iperf3", "off", "--netserver", "off", "--iperf", String(shared), "--ntttcp", String(shared)], 60_000);
      try {
        await serveReady(serve, 3);
        const c = await client(["-c", "127.0.0.1", "-p", String(shared), "--bounceback", "-t", "1"]).done;
        expect(c.code, c.out).toBe(0);
        expect(roundTrips(c.out).count).toBeGreaterThanOrEqual(10);
        await Bun.sleep(300);
        expect(serve.stdout()).toContain("(bb w/quickack len/hold=100/0)");
      } finally {
        serve.kill();
        await serve.done;
      }
    }, 60_000);
  });
}
