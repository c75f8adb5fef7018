/**
 * Live abuse against `anyperf iperf -s` (TCP) and `anyperf iperf -s -u` (UDP), from source through main.ts, while
 * stock iperf 2.1.8 clients test against them: idle connections, headers stalled half way, 1000 bogus connects,
 * headers with absurd thread counts, lengths, amounts and rates, garbage and absurd UDP headers, and a stock client
 * SIGKILLed mid-test. The stock clients running alongside must succeed, and both servers must serve fresh tests
 * afterwards without a stack trace or runaway memory. Ports 22200-22299 (22299 never listened on: connect-backs to
 * it are refused).
 */
import { describe, expect, test } from "bun:test";
import { createSocket } from "node:dgram";
import { connect } from "node:net";
import { csv, hasStockIperf, listening, oursMain, stock, waitFor, waitListening } from "../interop/iperf2-harness.ts";
import { listenerPid } from "../interop/netperf-harness.ts";
import { alive, bogusConnects, exchange, idleConnections, killMidTest, rssBoundKiB, rssKiB, sleep, stackTraceLines, stalledConnections, udpGarbage } from "./abusers.ts";

const TCP = 22200;
const UDP = 22201;
const NOBODY = 22299;
const L = "127.0.0.1";

const F = { version1: 0x80000000, extend: 0x40000000, version2: 0x04000000, lengthValid: 0x00010000, runNow: 1 };
const REVERSE = 0x0400;

/** A client header, written by hand so any word can be absurd: classic words, then the extended block if asked. */
function header(o: { flags: number; threads: number; port: number; bufLen: number; winBand: number; amount: number; options?: number; rate?: number; length?: number }): Uint8Array {
  const ext = (o.flags & F.extend) !== 0;
  const size = o.length ?? (ext ? 60 : 24);
  const b = new Uint8Array(size);
  const v = new DataView(b.buffer);
  const flags = (o.flags & F.lengthValid) !== 0 ? (o.flags & ~0x1fe) | ((size & 0xff) << 1) : o.flags;
  v.setUint32(0, flags >>> 0);
  v.setInt32(4, o.threads);
  v.setInt32(8, o.port);
  v.setInt32(12, o.bufLen);
  v.setInt32(16, o.winBand);
  v.setInt32(20, o.amount);
  if (ext && size >= 60) {
    v.setUint16(32, o.options ?? 0);
    v.setUint32(36, 0x00020001);
    v.setUint32(40, 0x00080003);
    v.setUint32(48, (o.rate ?? 0) >>> 0);
  }
  return b;
}

const MAX = 0x7fffffff;

/** A UDP datagram: sequence/timestamp block, then a client header asking for a reverse test of absurd size. */
function udpDatagram(seq: number, h: Uint8Array): Uint8Array {
  const d = new Uint8Array(16 + h.length + 64);
  new DataView(d.buffer).setInt32(0, seq);
  d.set(h, 16);
  return d;
}

async function sendUdp(port: number, datagrams: Uint8Array[], listenMs: number): Promise<number> {
  const s = createSocket("udp4");
  let got = 0;
  s.on("message", (m) => (got += m.length));
  await new Promise<void>((r) => s.bind(0, L, () => r()));
  const sendAll = async () => {
    for (const d of datagrams) await new Promise<void>((r) => s.send(d, port, L, () => r()));
  };
  await sendAll();
  // Alongside the garbage flood a request datagram can be dropped (nothing came back once in a clean-clone run, and
  // never alone): with no answer yet, it goes once more from the same port, as part of the same flow.
  await sleep(listenMs / 3);
  if (got === 0) await sendAll();
  await sleep((listenMs * 2) / 3);
  s.close();
  return got;
}

/** Reads whatever a reverse test sends us for `ms`, then closes: returns bytes read. */
function readFor(port: number, hello: Uint8Array, ms: number): Promise<number> {
  return new Promise((resolve) => {
    let got = 0;
    const s = connect({ host: L, port }, () => s.write(hello));
    s.on("data", (d) => (got += d.length));
    s.on("error", () => {});
    setTimeout(() => (s.destroy(), resolve(got)), ms);
  });
}

/** The stock UDP client got our server's report (no "did not receive ack" warning) and it shows a sane loss. */
function expectServerReport(out: string, minDatagrams: number, maxLoss: number): void {
  const lines = out.split("\n");
  const at = lines.findIndex((l) => l.endsWith("Server Report:"));
  expect(at, out).toBeGreaterThanOrEqual(0);
  expect(out).not.toContain("WARNING");
  const m = / (\d+)\/(\d+) \(/.exec(lines.slice(at + 1, at + 3).join("\n"));
  expect(m, out).not.toBeNull();
  const [lost, total] = [Number(m![1]), Number(m![2])];
  expect(total).toBeGreaterThan(minDatagrams);
  expect(lost / total).toBeLessThan(maxLoss);
}

describe.skipIf(!hasStockIperf())("iperf 2 servers under abuse", () => {
  test(
    "stock iperf clients (TCP and UDP) succeed alongside idle, stalled, bogus and absurd peers; both servers recover",
    async () => {
      expect(listening(TCP, "tcp") || listening(UDP, "udp") || listening(NOBODY, "tcp")).toBe(false);
      const tcpServer = oursMain(["-s", "-p", String(TCP)]);
      const udpServer = oursMain(["-s", "-u", "-p", String(UDP)]);
      try {
        await Promise.all([waitListening(TCP, "tcp"), waitListening(UDP, "udp"), waitFor(tcpServer, /Server listening/), waitFor(udpServer, /Server listening/)]);
        const pid = listenerPid(TCP)!;
        expect(pid).toBeGreaterThan(0);
        const rss0 = rssKiB(pid);

        const idle = idleConnections(TCP, 50);
        // The extended header is 60 bytes: 12 of them, then silence.
        const halfHeader = stalledConnections(TCP, 20, header({ flags: F.extend | F.version2, threads: 1, port: 0, bufLen: 0, winBand: 0, amount: -300 }).subarray(0, 12));
        const legitTcp = stock(["-c", L, "-p", String(TCP), "-t", "3", "-y", "C"]);
        const legitUdp = stock(["-c", L, "-p", String(UDP), "-u", "-b", "50M", "-t", "3"]);
        const flood = bogusConnects(TCP, { total: 1000, concurrency: 100 });
        const udpFlood = udpGarbage(UDP, 500);
        // Absurd words: 2^31 threads, 2 GiB writes and amounts, connect-backs (now and after EOF) to a closed port.
        const absurd = [
          exchange(TCP, header({ flags: F.version1, threads: MAX, port: NOBODY, bufLen: MAX, winBand: MAX, amount: MAX }), 1500),
          exchange(TCP, header({ flags: F.version1 | F.runNow, threads: MAX, port: NOBODY, bufLen: MAX, winBand: MAX, amount: -MAX - 1 }), 1500),
          exchange(TCP, header({ flags: F.extend | F.version2, threads: -1, port: -1, bufLen: -1, winBand: -1, amount: MAX, options: REVERSE, rate: 0xffffffff }), 1500),
          // Announces 255 header bytes (the most the length bits hold), sends 60.
          exchange(TCP, header({ flags: F.extend | F.lengthValid, threads: 1, port: 0, bufLen: 0, winBand: 0, amount: -100, length: 255 }).subarray(0, 60), 1500),
        ];
        // Reverse tests with the largest write size the engine takes (64 MiB) and one it refuses (2 GiB).
        const reverseBig = Promise.all(
          [64 * 1024 * 1024, 64 * 1024 * 1024, MAX].map((bufLen) => readFor(TCP, header({ flags: F.extend | F.version2, threads: 1, port: 0, bufLen, winBand: 0, amount: -MAX, options: REVERSE }), 2000)),
        );
        // UDP: a 1 s reverse request at 10 Mbit/s in datagrams of 2^31-1 bytes, 2^31 threads (it once made the server
        // fill a 2 GiB payload on its main thread).
        const udpReverse = sendUdp(UDP, [udpDatagram(0, header({ flags: F.extend | F.version2, threads: MAX, port: NOBODY, bufLen: MAX, winBand: MAX, amount: -100, options: REVERSE, rate: 10_000_000 }))], 1500);

        const [t, u] = await Promise.all([legitTcp.done, legitUdp.done]);
        expect(t.code, t.out).toBe(0);
        expect(u.code, u.out).toBe(0);
        const tl = csv(t.out);
        expect(tl.length).toBeGreaterThan(0);
        expect(tl.at(-1)!.bytes).toBeGreaterThan(50e6);
        // Garbage datagrams on the same socket cost the main thread some time, and on 2 cores the TCP abuse (64 MiB
        // reverse writes into this process) competes for the CPU: up to 12 % was seen alone, 27 % with CI's other lane
        // running interop tests beside it. A wedged server loses all or sends no report; half is the bound.
        expectServerReport(u.out, 10_000, 0.5);

        const f = await flood;
        expect(f.connected).toBeGreaterThan(900);
        expect(await udpFlood).toBe(500);
        // Each exchange gives up after 1.5 s; beyond that is this process's own event loop, busy with the 1000-connect
        // flood above (3.2 s seen in CI), not the server. A wedged server shows in the tests that follow.
        for (const x of await Promise.all(absurd)) expect(x.ms).toBeLessThan(6000);
        await reverseBig;
        // Datagrams of the UDP maximum came back, not none (an allocation failure) and not 2 GiB ones.
        expect(await udpReverse).toBeGreaterThan(500_000);
        expect((await idle.stop()).opened).toBe(50);
        expect((await halfHeader.stop()).opened).toBe(20);

        const killed = await killMidTest(["iperf", "-c", L, "-p", String(TCP), "-t", "10", "-i", "1", "-P", "2"], { ready: /\[SUM\] 0\.0+-1\.0+ sec/, afterMs: 6000 });
        expect(killed.sawReady, killed.out).toBe(true);
        const killedUdp = await killMidTest(["iperf", "-c", L, "-p", String(UDP), "-u", "-b", "20M", "-t", "10", "-i", "1"], { ready: / 0\.0+-1\.0+ sec/, afterMs: 6000 });
        expect(killedUdp.sawReady, killedUdp.out).toBe(true);

        const t2 = await stock(["-c", L, "-p", String(TCP), "-t", "2", "-P", "2", "-y", "C"]).done;
        expect(t2.code, t2.out).toBe(0);
        expect(csv(t2.out).reduce((n, l) => Math.max(n, l.bytes), 0)).toBeGreaterThan(30e6);
        const u2 = await stock(["-c", L, "-p", String(UDP), "-u", "-b", "50M", "-t", "2"]).done;
        expect(u2.code, u2.out).toBe(0);
        expectServerReport(u2.out, 6_000, 0.05);

        expect(alive(pid)).toBe(true);
        expect(rssKiB(pid)).toBeLessThan(rssBoundKiB(rss0));
      } finally {
        tcpServer.kill();
        udpServer.kill();
        const [a, b] = await Promise.all([tcpServer.done, udpServer.done]);
        expect(stackTraceLines(a.out)).toEqual([]);
        expect(stackTraceLines(b.out)).toEqual([]);
      }
    },
    60_000,
  );
});
