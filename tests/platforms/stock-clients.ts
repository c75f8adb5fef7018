/**
 * Stock clients against a server of one of our cross-built binaries (run however its platform needs), with the checks
 * every platform's pairing makes.
 */
import { expect } from "bun:test";
import { spawnProc, waitBound, type Proc } from "../support/processes.ts";
import { disagreement, json } from "../interop/iperf3-harness.ts";
import { csv } from "../interop/iperf2-harness.ts";

/** Our server started by `spawn` with `args`, listening on TCP `port`, for the time `use` takes. */
async function withServer(spawn: (args: string[]) => Proc, args: string[], port: number, use: (server: Proc) => Promise<void>): Promise<void> {
  const server = spawn(args);
  try {
    await waitBound(port, "tcp", 30_000);
    await use(server);
  } finally {
    server.kill();
  }
}

/**
 * Our `iperf3 -s` on `port` and stock iperf3 -c -J once per entry of `runs`: each run reports no error, and every
 * byte the sender sent arrived or was counted lost (UDP under emulation loses datagrams).
 */
export function stockIperf3Runs(spawn: (args: string[]) => Proc, port: number, runs: string[][], tolerance = 0.02): Promise<void> {
  return withServer(spawn, ["iperf3", "-s", "-p", String(port)], port, () => iperf3Runs(port, runs, tolerance));
}

async function iperf3Runs(port: number, runs: string[][], tolerance: number): Promise<void> {
  for (const args of runs) {
    const doc = json(await spawnProc(["iperf3", "-c", "127.0.0.1", "-p", String(port), "-J", ...args], 40_000).done);
    expect(doc.error).toBeUndefined();
    const blk = (doc.start as { test_start: { blksize: number } }).test_start.blksize;
    const sent = doc.end.sum_sent!.bytes!;
    expect(sent).toBeGreaterThan(0);
    expect(disagreement(sent, doc.end.sum_received!.bytes! + (doc.end.sum_received!.lost_packets ?? 0) * blk), args.join(" ")).toBeLessThanOrEqual(tolerance);
  }
}

/** Our `iperf -s -y C` on `port` and stock iperf -c -y C for 1 s: both count the same bytes. */
export function stockIperfRun(spawn: (args: string[]) => Proc, port: number): Promise<void> {
  return withServer(spawn, ["iperf", "-s", "-p", String(port), "-y", "C"], port, (server) => iperfRun(server, port));
}

async function iperfRun(server: Proc, port: number): Promise<void> {
  const c = await spawnProc(["iperf", "-c", "127.0.0.1", "-p", String(port), "-t", "1", "-y", "C"], 30_000).done;
  expect(c.code).toBe(0);
  const sent = csv(c.stdout).at(-1)?.bytes ?? 0;
  expect(sent).toBeGreaterThan(0);
  const end = Date.now() + 15_000;
  while ((csv(server.stdout()).at(-1)?.bytes ?? 0) !== sent && Date.now() < end) await Bun.sleep(100);
  expect(csv(server.stdout()).at(-1)?.bytes).toBe(sent);
}
