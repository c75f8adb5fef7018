/**
 * Process helpers for the iperf3 interop tests: stock `iperf3` and ours, each bounded in time and killed by pid,
 * and the readiness check (a LISTEN socket on the port in /proc/net, so no probe connection disturbs a server).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";

const CLI = join(import.meta.dir, "iperf3-cli.ts");
const MAIN = join(import.meta.dir, "..", "..", "main.ts");

export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface Proc {
  done: Promise<Finished>;
  stdout(): string;
  kill(): void;
}

function run(cmd: string[], limitMs: number): Proc {
  const p = Bun.spawn(cmd, { stdout: "pipe", stderr: "pipe" });
  let stdout = "";
  let stderr = "";
  const pump = async (s: ReadableStream<Uint8Array>, add: (t: string) => void) => {
    const dec = new TextDecoder();
    for await (const chunk of s) add(dec.decode(chunk, { stream: true }));
  };
  const timer = setTimeout(() => p.kill(), limitMs);
  const done = Promise.all([pump(p.stdout, (t) => (stdout += t)), pump(p.stderr, (t) => (stderr += t)), p.exited]).then(([, , code]) => {
    clearTimeout(timer);
    return { code, stdout, stderr };
  });
  return { done, stdout: () => stdout, kill: () => p.kill() };
}

/** `anyperf iperf3 <args>`. */
export const ours = (args: string[], limitMs = 30_000): Proc => run([process.execPath, CLI, ...args], limitMs);
/** `anyperf iperf3 <args>` through main.ts, for what main.ts adds (the global --http status endpoint). */
export const oursMain = (args: string[], limitMs = 30_000): Proc => run([process.execPath, MAIN, "iperf3", ...args], limitMs);
/** Stock iperf3 3.12. */
export const stock = (args: string[], limitMs = 30_000): Proc => run(["iperf3", ...args], limitMs);
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function hasStockIperf3(): boolean {
  try {
    const r = Bun.spawnSync(["iperf3", "-v"], { stdout: "pipe", stderr: "pipe" });
    return /iperf 3\./.test(r.stdout.toString());
  } catch {
    return false;
  }
}

function listening(port: number): boolean {
  const hex = port.toString(16).toUpperCase().padStart(4, "0");
  for (const f of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text = "";
    try {
      text = readFileSync(f, "latin1");
    } catch {
      continue;
    }
    // local_address is "ADDR:PORT"; state 0A is LISTEN.
    if (text.split("\n").some((l) => new RegExp(`:${hex} [0-9A-F]+:[0-9A-F]{4} 0A `).test(l))) return true;
  }
  return false;
}

/** Fails at once when something already listens on `port`: a leftover server would answer instead of ours. */
export function assertFree(port: number): void {
  if (listening(port)) throw new Error(`port ${port} is already in use by another process: stop it, or move this test's port`);
}

/** Waits until something listens on `port` (at most `ms`). */
export async function waitListening(port: number, ms = 8000): Promise<void> {
  const end = Date.now() + ms;
  while (!listening(port)) {
    if (Date.now() > end) throw new Error(`nothing listens on port ${port} after ${ms} ms`);
    await sleep(25);
  }
}

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
