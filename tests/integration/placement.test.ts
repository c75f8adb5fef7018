import { afterAll, expect, test } from "bun:test";
import { DataPlane } from "../../src/engine/data-plane.ts";
import { WorkerPool } from "../../src/engine/worker-pool.ts";

/**
 * A pool of the default size grows when senders and receivers meet (src/engine/placement.ts): every stream of two
 * send/receive pairs gets a Worker of its own, the new Workers among them, and each moves its bytes.
 */

afterAll(() => WorkerPool.shutdown());

const workerOf = (p: DataPlane) => (p as unknown as { workers: number[] }).workers[0]!;

async function pair(pool: WorkerPool) {
  const rx = await DataPlane.open([{ kind: "tcp-recv", id: 0, listen: { host: "127.0.0.1", port: 0 }, connections: 1 }], pool);
  const tx = await DataPlane.open([{ kind: "tcp-send", id: 0, connect: { host: "127.0.0.1", port: rx.localPorts[0]! }, writeSize: 65536, rate: { bitsPerSecond: 100e6 } }], pool);
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
