/**
 * Live abuse against `anyperf iperf3 -s` (from source, through main.ts) while stock iperf3 3.12 clients test
 * against it: idle and half-cookie connections, control connections stalled inside their parameters, 1000 bogus
 * connects, garbage UDP on the shared port, a 0x7fffffff JSON length and absurd parameters, and a stock client
 * SIGKILLed mid-test. The stock client running alongside must succeed, and the server must serve fresh TCP and UDP
 * tests afterwards without a stack trace or runaway memory. Ports 22100-22109.
 */
import { describe, expect, test } from "bun:test";
import { encodeCookie, generateCookie } from "../../interop/iperf3/cookie.ts";
import { encodeFrame } from "../../interop/iperf3/framing.ts";
import { assertFree, hasStockIperf3, json, oursMain, stock, waitListening } from "../interop/iperf3-harness.ts";
import { listenerPid } from "../interop/netperf-harness.ts";
import { alive, bogusConnects, exchange, idleConnections, killMidTest, rssBoundKiB, rssKiB, sleep, stackTraceLines, stalledConnections, udpGarbage } from "./abusers.ts";

const PORT = 22100;
const L = "127.0.0.1";

function cookie(): Uint8Array {
  return encodeCookie(generateCookie());
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) (out.set(p, o), (o += p.length));
  return out;
}

/** A cookie, then a params length word announcing `length` bytes, then `body`. */
function paramsPrefix(length: number, body: string): Uint8Array {
  const len = new Uint8Array(4);
  new DataView(len.buffer).setUint32(0, length, false);
  return concat(cookie(), len, new TextEncoder().encode(body));
}

/** Sum of bytes the receiving side counted in a stock -J document. */
function received(doc: ReturnType<typeof json>): number {
  return doc.end.sum_received?.bytes ?? doc.end.sum?.bytes ?? 0;
}

describe.skipIf(!hasStockIperf3())("iperf3 server under abuse", () => {
  test(
    "stock iperf3 clients succeed alongside idle, stalled, bogus and oversized connections; the server recovers",
    async () => {
      assertFree(PORT);
      const server = oursMain(["-s", "-p", String(PORT)], 60_000);
      try {
        await waitListening(PORT);
        const pid = listenerPid(PORT)!;
        expect(pid).toBeGreaterThan(0);
        const rss0 = rssKiB(pid);

        // Abuse and a real test at once.
        const idle = idleConnections(PORT, 50);
        const halfCookie = stalledConnections(PORT, 20, cookie().subarray(0, 20));
        // A control connection stalled inside its parameters holds one of the 8 test slots until its deadline;
        // 4 leave room for the real client and the one killed later.
        const midStart = performance.now();
        const midParams = stalledConnections(PORT, 4, paramsPrefix(200, '{"tcp":true,"omit":0,"time":'));
        const legit = stock(["-c", L, "-p", String(PORT), "-t", "3", "-J"], 25_000).done;
        const flood = bogusConnects(PORT, { total: 1000, concurrency: 100 });
        const udp = udpGarbage(PORT, 500);
        const huge = exchange(PORT, paramsPrefix(0x7fffffff, "{"), 15_000);
        const absurd = exchange(
          PORT,
          concat(cookie(), encodeFrame(JSON.stringify({ tcp: true, omit: 0, time: 2 ** 31, parallel: 1e6, len: 2 ** 31 - 1, bandwidth: 1e300, client_version: "3.12" }))),
          15_000,
        );
        const notJson = exchange(PORT, concat(cookie(), encodeFrame("}".repeat(500))), 15_000);

        const l = await legit;
        expect(l.code, l.stdout + l.stderr).toBe(0);
        const doc = json(l);
        // 3 s on loopback: hundreds of MB even on a loaded CI machine.
        expect(received(doc)).toBeGreaterThan(50e6);
        expect(doc.end.sum_received!.seconds).toBeGreaterThan(2.5);

        const f = await flood;
        expect(f.connected).toBeGreaterThan(900);
        expect(await udp).toBe(500);
        // A 2 GiB announced length is refused at once (SERVER_ERROR, then close), not waited for or allocated.
        for (const x of [await huge, await absurd, await notJson]) {
          expect(x.closed).toBe(true);
          expect(x.ms).toBeLessThan(5000);
          expect(x.reply.length).toBeGreaterThan(0);
        }
        const i = await idle.stop();
        const h = await halfCookie.stop();
        expect(i.opened).toBe(50);
        expect(h.opened).toBe(20);
        // Mid-parameter stallers are timed out by the server (10 s parameter deadline).
        await sleep(Math.max(0, midStart + 11_000 - performance.now()));
        const m = await midParams.stop();
        expect(m.opened).toBe(4);
        expect(m.closedByServer).toBe(4);

        // A stock client killed mid-test: no CLIENT_TERMINATE, the connections just die.
        const killed = await killMidTest(["iperf3", "-c", L, "-p", String(PORT), "-t", "10", "-P", "2", "--forceflush"], { ready: /\[SUM\]\s+0\.00-1\.0\d/, afterMs: 6000 });
        expect(killed.sawReady, killed.out).toBe(true);
        expect(killed.signal).toBe("SIGKILL");

        // The server serves fresh tests: TCP with 2 streams, then UDP.
        const tcp = await stock(["-c", L, "-p", String(PORT), "-t", "2", "-P", "2", "-J"], 20_000).done;
        expect(tcp.code, tcp.stdout + tcp.stderr).toBe(0);
        expect(received(json(tcp))).toBeGreaterThan(30e6);
        const u = await stock(["-c", L, "-p", String(PORT), "-u", "-b", "50M", "-t", "2", "-J"], 20_000).done;
        expect(u.code, u.stdout + u.stderr).toBe(0);
        const ud = json(u);
        expect(ud.end.sum!.bytes).toBeGreaterThan(10e6);
        expect(ud.end.sum!.lost_percent).toBeLessThan(5);

        expect(alive(pid)).toBe(true);
        const rss1 = rssKiB(pid);
        expect(rss1).toBeLessThan(rssBoundKiB(rss0));
      } finally {
        server.kill();
        const out = await server.done;
        expect(stackTraceLines(out.stdout + out.stderr)).toEqual([]);
      }
    },
    60_000,
  );
});
