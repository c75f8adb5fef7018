import { expect } from "bun:test";
import * as net from "node:net";
import { join } from "node:path";

/** Spawning helpers for the ntttcp interop tests: our CLI in a child process, and checks on its output. */

const CLI = join(import.meta.dir, "ntttcp-cli.ts");

export interface Finished {
  code: number;
  stdout: string;
  stderr: string;
}

export interface Child {
  done: Promise<Finished>;
  kill(signal?: NodeJS.Signals): void;
}

export function spawnOurs(args: string[], env: Record<string, string> = {}, cwd?: string): Child {
  const p = Bun.spawn([process.execPath, CLI, ...args], { stdout: "pipe", stderr: "pipe", env: { ...process.env, ...env }, cwd });
  const done = (async () => {
    const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
    return { code, stdout, stderr };
  })();
  return { done, kill: (signal) => p.kill(signal) };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Receiver first, sender after `delayMs`, both must finish within `limitMs`. */
export async function pair(receiver: string[], sender: string[], o: { delayMs?: number; env?: Record<string, string>; cwd?: string; limitMs?: number } = {}) {
  const r = spawnOurs(receiver, o.env, o.cwd);
  await sleep(o.delayMs ?? 700);
  const s = spawnOurs(sender, o.env, o.cwd);
  const limit = sleep(o.limitMs ?? 30_000).then(() => {
    r.kill();
    s.kill();
    throw new Error("pair did not finish in time");
  });
  const [rx, tx] = (await Promise.race([Promise.all([r.done, s.done]), limit])) as [Finished, Finished];
  return { rx, tx };
}

/** "total bytes\t:N" of the Linux summary. */
export function linuxTotalBytes(out: string): number {
  const m = /total bytes\t:(\d+)/.exec(out);
  if (!m) throw new Error(`no total bytes in:\n${out}`);
  return Number(m[1]);
}

/** Bytes per second of the Linux summary (total bytes / test duration). */
export function linuxRate(out: string): number {
  const m = /test duration\t:([\d.]+) seconds/.exec(out);
  if (!m) throw new Error(`no test duration in:\n${out}`);
  return linuxTotalBytes(out) / Number(m[1]);
}

/** Bytes per second of the Windows totals table (Throughput(MB/s) is MiB/s). */
export function windowsRate(out: string): number {
  const lines = out.split("\n");
  const i = lines.findIndex((l) => l.startsWith("   Bytes(MEG)"));
  if (i < 0) throw new Error(`no Windows totals in:\n${out}`);
  return Number(lines[i + 2]!.trim().split(/\s+/)[3]) * 1048576;
}

/** Bytes(MEG) of the Windows totals table (MiB), back to bytes. */
export function windowsTotalBytes(out: string): number {
  const lines = out.split("\n");
  const i = lines.findIndex((l) => l.startsWith("   Bytes(MEG)"));
  if (i < 0) throw new Error(`no Windows totals in:\n${out}`);
  return Number(lines[i + 2]!.trim().split(/\s+/)[0]) * 1048576;
}

/** Exit 0, or fail with what the process printed. */
export function expectOk(...runs: Finished[]): void {
  for (const f of runs) {
    if (f.code !== 0) throw new Error(`exit ${f.code}\n--- stdout ---\n${f.stdout.slice(-3000)}\n--- stderr ---\n${f.stderr.slice(-3000)}`);
  }
}

export function expectClose(a: number, b: number, tolerance: number): void {
  expect(a).toBeGreaterThan(0);
  expect(b).toBeGreaterThan(0);
  expect(Math.abs(a - b) / Math.max(a, b)).toBeLessThanOrEqual(tolerance);
}

/** Connects, retrying for up to 10 s while our process starts (start-up is slower on a loaded CI machine). */
export async function connect(port: number): Promise<net.Socket> {
  for (let i = 0; ; i++) {
    try {
      return await new Promise<net.Socket>((resolve, reject) => {
        const s = net.connect({ host: "127.0.0.1", port }, () => resolve(s));
        s.once("error", reject);
      });
    } catch (e) {
      if (i >= 100) throw e;
      await sleep(100);
    }
  }
}
