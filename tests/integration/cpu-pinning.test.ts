import { afterAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { DataPlane } from "../../src/engine/data-plane.ts";
import { cores, WorkerPool } from "../../src/engine/worker-pool.ts";
import { loadSockopt } from "../../src/sockopt/sockopt.ts";

/**
 * Streams that name a CPU run on a Worker pinned there (ntttcp -m n,CPU,host); the rest share the unpinned Workers.
 * The pin is checked where the kernel keeps it: the Cpus_allowed_list of the process's threads.
 */

afterAll(() => WorkerPool.shutdown());

const sockopt = await loadSockopt();
if (!sockopt) throw new Error("these tests need Linux glibc under Bun (sched_setaffinity)");

/** Threads of this process allowed on exactly the one CPU `cpu`. */
function threadsPinnedTo(cpu: number): number {
  let n = 0;
  for (const tid of readdirSync("/proc/self/task")) {
    const status = readFileSync(`/proc/self/task/${tid}/status`, "latin1");
    if (status.match(/^Cpus_allowed_list:\s*(\S+)/m)?.[1] === String(cpu)) n++;
  }
  return n;
}

async function eventually(check: () => boolean, ms = 3000): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await Bun.sleep(20)) if (check()) return true;
  return check();
}

describe("per-stream CPU pinning", () => {
  const pool = WorkerPool.shared({ workers: 2 });

  test("pinned streams share one Worker per CPU, apart from the unpinned Workers", () => {
    const cpu = cores() - 1;
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

  test("a stream with cpu runs on a thread the kernel keeps on that CPU, and still moves data", async () => {
    const cpu = cores() - 1;
    const before = threadsPinnedTo(cpu);
    const recv = await DataPlane.open([{ kind: "udp-recv", id: 0, listen: { host: "127.0.0.1", port: 0 }, datagramSize: 2048, format: "none", cpu }]);
    const port = recv.localPorts[0]!;
    const send = await DataPlane.open([
      { kind: "udp-send", id: 0, connect: { host: "127.0.0.1", port }, datagramSize: 1000, format: "none", limitPackets: 200, rate: { packetsPerSecond: 20000 }, cpu },
    ]);
    recv.go();
    send.go();
    await send.ended;
    expect(await eventually(() => recv.snapshot().streams[0]!.packets >= 150)).toBe(true);
    expect(await eventually(() => threadsPinnedTo(cpu) > before)).toBe(true);
    recv.stop();
    await recv.ended;
  });
});
