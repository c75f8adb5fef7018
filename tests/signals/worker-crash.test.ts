import { expect, test } from "bun:test";
import { DataPlane } from "../../src/engine/data-plane.ts";
import { WorkerPool } from "../../src/engine/worker-pool.ts";

/**
 * A crashed data Worker ends the tests it served with an error and nothing else: a test on another Worker keeps
 * counting and ends normally, and the pool respawns the Worker so the next test runs. The crash is made the only
 * way a test can reach: a message the Worker cannot read (null) posted to it directly through the pool's private
 * list, which no CLI path can do.
 */

type Internals = { workers: Worker[] };
const workerOf = (p: DataPlane) => (p as unknown as { workers: number[] }).workers;

async function tcpPair(pool: WorkerPool) {
  const rx = await DataPlane.open([{ kind: "tcp-recv", id: 0, listen: { host: "127.0.0.1", port: 0 }, connections: 1 }], { pool });
  const tx = await DataPlane.open([{ kind: "tcp-send", id: 0, connect: { host: "127.0.0.1", port: rx.localPorts[0]! }, writeSize: 65536, rate: { bitsPerSecond: 200e6 } }], { pool });
  tx.go();
  rx.go();
  return { rx, tx };
}

const received = (p: DataPlane) => p.snapshot().streams[0]!.bytes;

test("a crashed Worker ends only its own test's streams, with an error; the pool serves the next test", async () => {
  const pool = WorkerPool.shared({ workers: 4 });
  const a = await tcpPair(pool);
  const b = await tcpPair(pool);
  const victim = workerOf(a.rx)[0]!;
  // The other test must not share the victim Worker, or it would (rightly) fail too.
  expect([workerOf(b.rx)[0], workerOf(b.tx)[0]]).not.toContain(victim);
  await Bun.sleep(300);
  expect(received(a.rx)).toBeGreaterThan(0);

  (pool as unknown as Internals).workers[victim]!.postMessage(null);
  await a.rx.ended;
  expect(a.rx.ends[0]!.reason).toBe("error");
  expect(a.rx.ends[0]!.error?.message).toMatch(new RegExp(`data worker ${victim} crashed`));

  // The other test still moves data and ends the normal way.
  const before = received(b.rx);
  await Bun.sleep(300);
  expect(received(b.rx)).toBeGreaterThan(before);
  expect(b.rx.ends[0]).toBeUndefined();
  await Promise.all([b.tx.stop(), b.rx.stop(), a.tx.stop()]);
  expect(b.rx.ends[0]!.reason).not.toBe("error");

  // The respawned Worker takes new streams.
  const c = await tcpPair(pool);
  await Bun.sleep(300);
  expect(received(c.rx)).toBeGreaterThan(0);
  await Promise.all([c.tx.stop(), c.rx.stop()]);
}, 30_000);
