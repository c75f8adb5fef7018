import { afterAll, expect, test } from "bun:test";
import { DataPlane } from "../../src/engine/data-plane.ts";
import { WorkerPool, cores } from "../../src/engine/worker-pool.ts";
import type { StreamSpecInput } from "../../src/stream-spec.ts";

/**
 * A pool of the default size grows when senders and receivers meet (src/engine/placement.ts): every stream of two
 * send/receive pairs gets a Worker of its own, the new Workers among them, and each moves its bytes. It grows for a
 * test whose first stream finds every Worker busy, not for one test's many streams, whether they come on one plane
 * or on a plane each (iperf3's data connections, `joinsTest`).
 */

afterAll(() => WorkerPool.shutdown());

const workerOf = (p: DataPlane) => (p as unknown as { workers: number[] }).workers[0]!;

async function pair(pool: WorkerPool) {
  const rx = await DataPlane.open([{ kind: "tcp-recv", id: 0, listen: { host: "127.0.0.1", port: 0 }, connections: 1 }], { pool });
  const tx = await DataPlane.open([{ kind: "tcp-send", id: 0, connect: { host: "127.0.0.1", port: rx.localPorts[0]! }, writeSize: 65536, rate: { bitsPerSecond: 100e6 } }], { pool });
  rx.go();
  tx.go();
  return { rx, tx };
}

test("two send/receive pairs: four streams on four Workers, each counting", async () => {
  WorkerPool.shutdown();
  const pool = WorkerPool.shared();
  const pairs = [await pair(pool), await pair(pool)];
  const planes = pairs.flatMap((p) => [p.rx, p.tx]);
  expect(new Set(planes.map(workerOf)).size).toBe(4);
  for (const end = Date.now() + 5000; Date.now() < end && pairs.some((p) => p.rx.snapshot().streams[0]!.bytes === 0); ) await Bun.sleep(20);
  for (const p of pairs) expect(p.rx.snapshot().streams[0]!.bytes).toBeGreaterThan(0);
  await Promise.all(pairs.map((p) => p.tx.stop()));
  await Promise.all(pairs.map((p) => p.rx.stop()));
}, 30_000);

const receiver = (id: number): StreamSpecInput => ({ kind: "tcp-recv", id, listen: { host: "127.0.0.1", port: 0 }, connections: 1 });

test("one test of many receiving streams keeps to the pool's Workers; as many one-stream tests get one each", async () => {
  WorkerPool.shutdown();
  const pool = WorkerPool.shared();
  const n = cores() + 2;
  const one = await DataPlane.open(Array.from({ length: n }, (_, i) => receiver(i)), { pool });
  const used = new Set((one as unknown as { workers: number[] }).workers);
  expect(used.size).toBe(cores());
  await one.stop();
  const tests = [];
  for (let i = 0; i < n; i++) tests.push(await DataPlane.open([receiver(0)], { pool }));
  expect(new Set(tests.map(workerOf)).size).toBe(n);
  await Promise.all(tests.map((t) => t.stop()));
}, 30_000);

test("one test's streams on a plane each (joinsTest after the first) keep to the pool's Workers", async () => {
  WorkerPool.shutdown();
  const pool = WorkerPool.shared();
  const planes = [];
  for (let i = 0; i < cores() + 2; i++) planes.push(await DataPlane.open([receiver(0)], { pool, joinsTest: i > 0 }));
  expect(new Set(planes.map(workerOf)).size).toBe(cores());
  await Promise.all(planes.map((p) => p.stop()));
}, 30_000);
