/**
 * Live abuse against `anyperf ntttcp -r` (Linux sync mode and -N) while anyperf's own ntttcp sender runs a real
 * test against it (ntttcp-for-linux is not packaged; our sender speaks its sync protocol byte for byte): idle and
 * half-message connections on the sync port, sync values out of range, 1000 bogus connects and idle connections on
 * the data ports, and a sender SIGKILLed mid-test. The real test must succeed; the receiver must end on its own
 * clock after a killed sender, and a fresh receiver must serve the next test on the same ports. Ports 22400-22449.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { expectOk, linuxTotalBytes, spawnOurs } from "../interop/ntttcp-harness.ts";
import { listenerPid } from "../interop/netperf-harness.ts";
import { alive, bogusConnects, exchange, idleConnections, killMidTest, rssBoundKiB, rssKiB, sleep, stackTraceLines, stalledConnections } from "./abusers.ts";

const CLI = join(import.meta.dir, "..", "interop", "ntttcp-cli.ts");
const words = (s: string) => s.split(" ");

function int32(v: number): Uint8Array {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setInt32(0, v);
  return b;
}

async function waitFor(port: number, ms = 8000): Promise<number> {
  const end = Date.now() + ms;
  for (;;) {
    const pid = listenerPid(port);
    if (pid !== undefined) return pid;
    if (Date.now() > end) throw new Error(`nothing listens on ${port} after ${ms} ms`);
    await sleep(50);
  }
}

describe("ntttcp receiver under abuse", () => {
  test(
    "Linux sync: a real test succeeds alongside sync-port and data-port abuse; a killed sender ends the run on the receiver's clock; the ports serve again",
    async () => {
      const base = 22400;
      const sync = base - 1;
      expect(listenerPid(base) ?? listenerPid(sync)).toBeUndefined();
      const rx = spawnOurs(words(`-r127.0.0.1 -P 2 -p ${base} -t 3`));
      let idleSync: ReturnType<typeof idleConnections> | undefined;
      let idleData: ReturnType<typeof idleConnections> | undefined;
      try {
        const pid = await waitFor(sync);
        await waitFor(base);
        const rss0 = rssKiB(pid);
        // More idle sync connections than the receiver admits (16), and half a sync message on two more.
        idleSync = idleConnections(sync, 24);
        const half = stalledConnections(sync, 2, int32(10).subarray(0, 2));
        idleData = idleConnections(base, 20);
        const flood = bogusConnects(base + 1, { total: 1000, concurrency: 100 });
        await sleep(300);
        const tx = spawnOurs(words(`-s127.0.0.1 -P 2 -n 1 -p ${base} -t 3 -B 1G`));
        // Once the test runs: out-of-range sync values must not disturb it (answers only).
        await sleep(1500);
        const odd = await Promise.all([0x7fffffff, -0x80000000, -1, 0x58].map((v) => exchange(sync, int32(v), 800)));
        const [r, t] = await Promise.all([rx.done, tx.done]);
        expectOk(r, t);
        expect(linuxTotalBytes(r.stdout)).toBeGreaterThan(100e6);
        expect(linuxTotalBytes(t.stdout)).toBeGreaterThan(100e6);
        expect((await flood).connected).toBeGreaterThan(900);
        for (const o of odd) expect(o.reply.length).toBeGreaterThanOrEqual(4);
        expect(idleSync.opened()).toBe(24);
        expect(idleData.opened()).toBe(20);
        await half.stop();
        expect(stackTraceLines(r.stdout + r.stderr + t.stdout + t.stderr)).toEqual([]);
        expect(rssKiB(pid) === 0 || rssKiB(pid) < rssBoundKiB(rss0)).toBe(true);
      } finally {
        await idleSync?.stop();
        await idleData?.stop();
        rx.kill();
      }

      // A sender killed mid-test: the receiver still ends on its own clock, with what arrived.
      const rx2 = spawnOurs(words(`-r127.0.0.1 -P 2 -p ${base} -t 3`));
      try {
        await waitFor(sync);
        const killed = await killMidTest([process.execPath, CLI, ...words(`-s127.0.0.1 -P 2 -n 1 -p ${base} -t 4 -B 1G`)], { ready: /Network activity progressing/, afterMs: 6000 });
        expect(killed.sawReady, killed.out).toBe(true);
        const r2 = await Promise.race([rx2.done, sleep(15_000).then(() => null)]);
        expect(r2, "the receiver did not end after its sender was killed").not.toBeNull();
        expectOk(r2!);
        expect(linuxTotalBytes(r2!.stdout)).toBeGreaterThan(0);
        expect(stackTraceLines(r2!.stdout + r2!.stderr)).toEqual([]);
      } finally {
        rx2.kill();
      }

      // The same ports serve a fresh test.
      const rx3 = spawnOurs(words(`-r127.0.0.1 -P 2 -p ${base} -t 2`));
      try {
        await waitFor(sync);
        const t3 = spawnOurs(words(`-s127.0.0.1 -P 2 -n 1 -p ${base} -t 2 -B 1G`));
        const [r3, tx3] = await Promise.all([rx3.done, t3.done]);
        expectOk(r3, tx3);
        expect(linuxTotalBytes(r3.stdout)).toBeGreaterThan(50e6);
      } finally {
        rx3.kill();
      }
    },
    40_000,
  );

  test(
    "-N: a real test succeeds alongside 1000 bogus connects and idle connections on the data ports",
    async () => {
      const base = 22420;
      expect(listenerPid(base)).toBeUndefined();
      const rx = spawnOurs(words(`-r127.0.0.1 -N -P 2 -p ${base} -t 3`));
      let idle: ReturnType<typeof idleConnections> | undefined;
      try {
        const pid = await waitFor(base);
        const rss0 = rssKiB(pid);
        idle = idleConnections(base + 1, 20);
        // Bogus bytes start a -N receiver's clock, as they would ntttcp-for-linux's; the sender follows at once.
        const flood = bogusConnects(base, { total: 1000, concurrency: 100 });
        const tx = spawnOurs(words(`-s127.0.0.1 -N -P 2 -n 1 -p ${base} -t 3 -B 1G`));
        const [r, t] = await Promise.all([rx.done, tx.done]);
        expectOk(r, t);
        expect(linuxTotalBytes(t.stdout)).toBeGreaterThan(100e6);
        expect(linuxTotalBytes(r.stdout)).toBeGreaterThan(50e6);
        expect((await flood).connected).toBeGreaterThan(900);
        expect(idle.opened()).toBe(20);
        expect(stackTraceLines(r.stdout + r.stderr + t.stdout + t.stderr)).toEqual([]);
        expect(alive(pid) ? rssKiB(pid) < rssBoundKiB(rss0) : true).toBe(true);
      } finally {
        await idle?.stop();
        rx.kill();
      }
    },
    30_000,
  );
});
