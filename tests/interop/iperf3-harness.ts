/**
 * Process helpers for the iperf3 interop tests: stock `iperf3` and ours, each bounded in time and killed by pid,
 * and the readiness check (a LISTEN socket on the port in /proc/net, so no probe connection disturbs a server).
 */
import { homedir } from "node:os";
import { join } from "node:path";
import { hasTool, spawnProc, waitBound, type Finished, type Proc } from "../support/processes.ts";
import type { StockPeer } from "../support/stock-peers.ts";

export { assertFree, sleep, type Finished, type Proc } from "../support/processes.ts";

const CLI = join(import.meta.dir, "iperf3-cli.ts");
const MAIN = join(import.meta.dir, "..", "..", "main.ts");

/** `anyperf iperf3 <args>`. */
export const ours = (args: string[], limitMs = 30_000): Proc => spawnProc([process.execPath, CLI, ...args], limitMs);
/** `anyperf iperf3 <args>` through main.ts, for what main.ts adds (the global --http status endpoint). */
export const oursMain = (args: string[], limitMs = 30_000): Proc => spawnProc([process.execPath, MAIN, "iperf3", ...args], limitMs);
/** Stock iperf3 3.12. */
export const stock = (args: string[], limitMs = 30_000): Proc => spawnProc(["iperf3", ...args], limitMs);
/** A given stock iperf3 (the system's or a newer one, tests/support/stock-peers.ts). */
export const stockPeer =
  (peer: StockPeer) =>
  (args: string[], limitMs = 30_000): Proc =>
    spawnProc([peer.command, ...args], limitMs);

export const hasStockIperf3 = (): boolean => hasTool(["iperf3", "-v"], /iperf 3\./);

/** Debian trixie's iperf3 3.18, where scripts/install-trixie-peers put it. */
const TRIXIE = join(process.env.ANYPERF_PEERS ?? join(homedir(), ".cache", "anyperf", "peers"), "trixie", "bin", "iperf3");
export const trixie = (args: string[], limitMs = 30_000): Proc => spawnProc([TRIXIE, ...args], limitMs);
export const hasTrixieIperf3 = (): boolean => hasTool([TRIXIE, "-v"], /iperf 3\.18/);

/** Waits until something listens on `port` (at most `ms`). */
export const waitListening = (port: number, ms = 8000): Promise<void> => waitBound(port, "tcp", ms);

/** The JSON document a -J run printed (stock or ours). */
export function json(f: Finished): Record<string, unknown> & { end: Record<string, Record<string, number>>; error?: string } {
  try {
    return JSON.parse(f.stdout);
  } catch {
    throw new Error(`not a JSON document (exit ${f.code}):\n${f.stdout}\n${f.stderr}`);
  }
}

/** |a - b| / max(a, b), the relative disagreement of two byte counts. */
export function disagreement(a: number, b: number): number {
  const m = Math.max(Math.abs(a), Math.abs(b));
  return m === 0 ? 0 : Math.abs(a - b) / m;
}
