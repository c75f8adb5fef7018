import { afterAll, describe, expect, test } from "bun:test";
import { DataPlane } from "../../src/engine/data-plane.ts";
import { WorkerPool } from "../../src/engine/worker-pool.ts";

/**
 * A bulk receiver's read limit (tcp-recv `limitPackets`, NTttcp's count mode: a receiver thread stops after -n
 * receive calls): the stream ends after exactly that many reads of at most readSize bytes, in blocking mode (one
 * connection alone on its Worker) and on the event loop (two connections, whose callbacks can carry several reads'
 * worth), and the sender that still had bytes to send ends too.
 */

afterAll(() => WorkerPool.shutdown());
WorkerPool.shared({ workers: 2 });

const READ = 4096;
const LIMIT = 500;

async function limited(connections: number) {
  const rx = await DataPlane.open([{ kind: "tcp-recv", id: 0, listen: { host: "127.0.0.1", port: 0 }, connections, readSize: READ, endOnEof: true, limitPackets: LIMIT }]);
  // Far more than the receiver will read: only the receiver's limit can end this.
  const tx = await DataPlane.open([{ kind: "tcp-send", id: 0, connect: { host: "127.0.0.1", port: rx.localPorts[0]! }, connections, writeSize: 65536 }]);
  rx.go();
  tx.go();
  await Promise.race([rx.ended, Bun.sleep(10_000)]);
  await Promise.race([tx.ended, Bun.sleep(10_000)]);
  const r = rx.snapshot().streams[0]!;
  const ends = { rx: rx.ends[0]?.reason, txEnded: tx.ends[0] !== undefined };
  if (!ends.txEnded) tx.stop();
  return { ends, r };
}

describe("tcp-recv limitPackets: a receiver that stops after so many reads", () => {
  for (const [mode, connections] of [["blocking mode", 1], ["the event loop", 2]] as const) {
    test(`${mode}: exactly the limit's reads, each of at most readSize bytes; the sender ends too`, async () => {
      const { ends, r } = await limited(connections);
      expect(ends).toEqual({ rx: "limit", txEnded: true });
      expect(r.packets).toBe(LIMIT);
      expect(r.bytes).toBeGreaterThan(0);
      expect(r.bytes).toBeLessThanOrEqual(LIMIT * READ);
    });
  }
});
