/**
 * Process helpers for the live limit tests: `anyperf <mode> ...` through main.ts (where the global --allow and
 * --max-* options are taken), the stock peers, each bounded in time and killed by pid, and readiness by /proc/net
 * (no probe connection, which a server with --allow would log as a refusal).
 */
import { join } from "node:path";
import { spawnProc, type Proc } from "../support/processes.ts";

export { assertFree, hasTool, sleep, spawnProc, waitBound, waitFor, type Finished, type Proc } from "../support/processes.ts";

const MAIN = join(import.meta.dir, "..", "..", "main.ts");

/** `anyperf <mode> <args>` as the binary runs it (main.ts: global options, then the dialect). */
export const anyperf = (mode: string, args: string[], limitMs = 30_000): Proc => spawnProc([process.execPath, MAIN, mode, ...args], limitMs);

