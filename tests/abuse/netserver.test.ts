/**
 * Live abuse against `anyperf netserver` (from source through main.ts) while stock netperf 2.7.0 tests against it:
 * idle control connections, requests stalled half way through their 656 bytes, 1000 bogus connects, DO_OMNI
 * requests with absurd sizes, widths and lengths, an unknown message type, and a stock netperf SIGKILLed mid-test.
 * The stock tests running alongside must succeed, and the server must serve fresh tests afterwards without a stack
 * trace or runaway memory. Ports 22300-22309.
 */
import { describe, expect, test } from "bun:test";
import { encodeOmniRequest } from "../../interop/netperf/omni-request.ts";
import { MESSAGE_SIZE } from "../../interop/netperf/words.ts";
import { finish, hasStockNetperf, keyvals, listenerPid, oursNetserver, stockNetperf, waitListening } from "../interop/netperf-harness.ts";
import { alive, bogusConnects, exchange, idleConnections, killMidTest, rssBoundKiB, rssKiB, stackTraceLines, stalledConnections } from "./abusers.ts";

const PORT = 22300;
const L = "127.0.0.1";
const MAX = 0x7fffffff;

const stream = (seconds: number) => ["-H", L, "-p", String(PORT), "-l", String(seconds), "-P", "0", "-t", "TCP_STREAM", "--", "-k", "THROUGHPUT,REMOTE_BYTES_RECVD,ELAPSED_TIME"];
const rr = (seconds: number) => ["-H", L, "-p", String(PORT), "-l", String(seconds), "-P", "0", "-t", "TCP_RR", "--", "-k", "TRANSACTION_RATE,ELAPSED_TIME"];

/** Absurd DO_OMNI requests: every size a peer may announce at its extreme. */
function absurdRequests(): Uint8Array[] {
  const rrFlags = { requestSize: MAX, responseSize: MAX, direction: 6 };
  const huge = { sendBufSize: MAX, recvBufSize: MAX, sendWidth: 0xffffffff, recvWidth: 0xffffffff, sendAlignment: 0x80000000, recvAlignment: 0x80000000, sendOffset: 0xffffffff };
  const unknown = new Uint8Array(MESSAGE_SIZE).fill(0xff);
  return [
    encodeOmniRequest({ ...huge, sendSize: MAX, receiveSize: MAX, testLength: -MAX, direction: 2 }),
    encodeOmniRequest({ ...huge, ...rrFlags, testLength: MAX }),
    encodeOmniRequest({ sendSize: MAX, testLength: -MAX - 1, socketType: 2, protocol: 17, direction: 2 }),
    encodeOmniRequest({ sendWidth: 0xffffffff, requestSize: 1, responseSize: 1, direction: 6, intervalBurst: 0xffffffff, intervalUsecs: 0xffffffff, testLength: MAX }),
    unknown,
  ];
}

describe.skipIf(!hasStockNetperf())("netserver under abuse", () => {
  test(
    "stock netperf succeeds alongside idle, stalled, bogus and absurd control connections; the server recovers",
    async () => {
      expect(listenerPid(PORT)).toBeUndefined();
      const server = oursNetserver(["-D", "-p", String(PORT)]);
      try {
        await waitListening(PORT, 10_000);
        const pid = listenerPid(PORT)!;
        expect(pid).toBe(server.pid);
        const rss0 = rssKiB(pid);

        const idle = idleConnections(PORT, 50);
        const halfRequest = stalledConnections(PORT, 20, encodeOmniRequest({ testLength: 2 }).subarray(0, 300));
        const legitStream = finish(stockNetperf(stream(3)), 25_000);
        const legitRr = finish(stockNetperf(rr(3)), 25_000);
        const flood = bogusConnects(PORT, { total: 1000, concurrency: 100 });
        const absurd = Promise.all(absurdRequests().map((r) => exchange(PORT, r, 3000)));

        const [s, r] = await Promise.all([legitStream, legitRr]);
        expect(s.code, s.out + s.err).toBe(0);
        expect(r.code, r.out + r.err).toBe(0);
        const sk = keyvals(s.out);
        // 10^6 bits/s; loopback TCP under abuse still does hundreds of Mbit/s.
        expect(Number(sk.THROUGHPUT)).toBeGreaterThan(100);
        expect(Number(sk.REMOTE_BYTES_RECVD)).toBeGreaterThan(30e6);
        expect(Number(sk.ELAPSED_TIME)).toBeGreaterThan(2.5);
        expect(Number(keyvals(r.out).TRANSACTION_RATE)).toBeGreaterThan(500);

        const f = await flood;
        expect(f.connected).toBeGreaterThan(900);
        // Every absurd request is answered (an error reply) rather than acted on or waited out.
        for (const x of await absurd) expect(x.reply.length, `reply to an absurd request after ${x.ms} ms`).toBeGreaterThan(0);
        expect((await idle.stop()).opened).toBe(50);
        expect((await halfRequest.stop()).opened).toBe(20);

        const killed = await killMidTest(["netperf", "-H", L, "-p", String(PORT), "-l", "10", "-D", "0.5", "-t", "TCP_STREAM"], { ready: /Interim result/, afterMs: 6000 });
        expect(killed.sawReady, killed.out).toBe(true);
        const killedRr = await killMidTest(["netperf", "-H", L, "-p", String(PORT), "-l", "10", "-D", "0.5", "-t", "TCP_RR"], { ready: /Interim result/, afterMs: 6000 });
        expect(killedRr.sawReady, killedRr.out).toBe(true);

        const s2 = await finish(stockNetperf(stream(2)), 20_000);
        expect(s2.code, s2.out + s2.err).toBe(0);
        expect(Number(keyvals(s2.out).THROUGHPUT)).toBeGreaterThan(100);
        const r2 = await finish(stockNetperf(rr(2)), 20_000);
        expect(r2.code, r2.out + r2.err).toBe(0);
        expect(Number(keyvals(r2.out).TRANSACTION_RATE)).toBeGreaterThan(500);

        expect(alive(pid)).toBe(true);
        expect(rssKiB(pid)).toBeLessThan(rssBoundKiB(rss0));
      } finally {
        server.kill();
        const out = await server.done;
        expect(stackTraceLines(out.out + out.err)).toEqual([]);
      }
    },
    60_000,
  );
});
