import { afterAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { DataPlane } from "../../src/engine/data-plane.ts";
import { WorkerPool } from "../../src/engine/worker-pool.ts";
import { loadSockopt } from "../../src/sockopt/sockopt.ts";
import { allowedOf, cpuList } from "../support/cpus.ts";

/**
 * Streams that name a CPU run on a Worker pinned there (ntttcp -m n,CPU,host); the rest share the unpinned Workers.
 * The pin is checked where the kernel keeps it: the Cpus_allowed_list of the process's threads.
 */

afterAll(() => WorkerPool.shutdown());

const sockopt = await loadSockopt();
if (!sockopt) throw new Error("these tests need Linux glibc under Bun (sched_setaffinity)");

/** Threads of this process allowed on exactly the one CPU `cpu`. */
function threadsPinnedTo(cpu: number): number {
  return readdirSync("/proc/self/task").filter((tid) => allowedOf(`/proc/self/task/${tid}/status`) === String(cpu)).length;
}

// The last CPU this process may run on: a CI runner's cpuset need not be 0..cores-1, and a CPU outside it is refused.
const mine = cpuList(allowedOf("/proc/self/status"));
const cpu = mine.at(-1)!;

async function eventually(check: () => boolean, ms = 3000): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await Bun.sleep(20)) if (check()) return true;
  return check();
}

describe("per-stream CPU pinning", () => {
  const pool = WorkerPool.shared({ workers: 2 });

  test("pinned streams share one Worker per CPU, apart from the unpinned Workers", () => {
    const at = (cpu?: number) => ({ cpu, local: false, dir: "recv" as const });
    const placed = pool.assign([at(), at(cpu), at(cpu), at()]);
    try {
      expect(placed[1]).toBe(placed[2]!);
      expect(placed[1]).toBeGreaterThanOrEqual(2);
      expect(placed[0]).toBeLessThan(2);
      expect(placed[3]).toBeLessThan(2);
      expect(placed[0]).not.toBe(placed[3]!);
      // The pinned Worker is reused, not started again, by a later test asking for the same CPU.
      const again = pool.assign([at(cpu)]);
      expect(again[0]).toBe(placed[1]!);
      pool.release(again, ["recv"]);
    } finally {
      pool.release(placed, placed.map(() => "recv"));
    }
  });

  // With one CPU in the set every thread is on it, and nothing would tell a pinned one.
  test.skipIf(mine.length < 2)("a stream with cpu runs on a thread the kernel keeps on that CPU, and still moves data", async () => {
    // Only the pool's Worker for `cpu` pins itself there (the test above may have started it already).
    const recv = await DataPlane.open([{ kind: "udp-recv", id: 0, listen: { host: "127.0.0.1", port: 0 }, datagramSize: 2048, format: "none", cpu }]);
    expect(await eventually(() => threadsPinnedTo(cpu) === 1)).toBe(true);
    const port = recv.localPorts[0]!;
    // Small datagrams, paced: all 200 fit the receive buffer should a loaded CI runner start the reader late.
    const send = await DataPlane.open([
      { kind: "udp-send", id: 0, connect: { host: "127.0.0.1", port }, datagramSize: 200, format: "none", limitPackets: 200, rate: { packetsPerSecond: 5000 }, cpu },
    ]);
    recv.go();
    send.go();
    await send.ended;
    expect(await eventually(() => recv.snapshot().streams[0]!.packets >= 150)).toBe(true);
    recv.stop();
    await recv.ended;
  });
});
