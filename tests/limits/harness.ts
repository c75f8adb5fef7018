/**
 * Process helpers for the live limit tests: `anyperf <mode> ...` through main.ts (where the global --allow and
 * --max-* options are taken), the stock peers, each bounded in time and killed by pid, and readiness by /proc/net
 * (no probe connection, which a server with --allow would log as a refusal).
 */
import { afterEach } from "bun:test";
import { join } from "node:path";
import { assertFree, spawnProc, waitBound, type Proc } from "../support/processes.ts";

export { assertFree, hasTool, sleep, spawnProc, waitBound, waitFor, type Finished, type Proc } from "../support/processes.ts";

const MAIN = join(import.meta.dir, "..", "..", "main.ts");

/** `anyperf <mode> <args>` as the binary runs it (main.ts: global options, then the dialect). */
export const anyperf = (mode: string, args: string[], limitMs = 30_000): Proc => spawnProc([process.execPath, MAIN, mode, ...args], limitMs);


/**
 * For one test file: `start(mode, args, port)` runs an anyperf server and waits until it is bound; every server
 * started is killed after each test, so none outlives the test that needed it.
 */
export function serversPerTest(): (mode: string, args: string[], port: number, proto?: "tcp" | "udp") => Promise<Proc> {
  const running: Proc[] = [];
  afterEach(async () => {
    for (const s of running.splice(0)) {
      s.kill();
      await s.done;
    }
  });
  return async (mode, args, port, proto = "tcp") => {
    assertFree(port, proto);
    const s = anyperf(mode, args, 40_000);
    running.push(s);
    await waitBound(port, proto);
    return s;
  };
}
