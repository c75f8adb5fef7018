import { connect } from "node:net";
import { join } from "node:path";

/** Process helpers for the netperf interop tests: stock netperf/netserver and ours, bounded in time, killed by pid. */

const CLI = join(import.meta.dir, "netperf-cli.ts");

export interface Finished {
  code: number | null;
  out: string;
  err: string;
}

export interface Proc {
  done: Promise<Finished>;
  text(): string;
  kill(): void;
}

function run(cmd: string[]): Proc {
  const p = Bun.spawn(cmd, { stdout: "pipe", stderr: "pipe" });
  let out = "";
  let err = "";
  const pump = async (s: ReadableStream<Uint8Array>, into: (t: string) => void) => {
    const dec = new TextDecoder();
    for await (const chunk of s) into(dec.decode(chunk, { stream: true }));
  };
  const done = Promise.all([pump(p.stdout, (t) => (out += t)), pump(p.stderr, (t) => (err += t)), p.exited]).then(([, , code]) => ({ code, out, err }));
  return { done, text: () => out + err, kill: () => p.kill() };
}

export const oursNetperf = (args: string[]): Proc => run([process.execPath, CLI, "netperf", ...args]);
export const oursNetserver = (args: string[]): Proc => run([process.execPath, CLI, "netserver", ...args]);
export const stockNetperf = (args: string[]): Proc => run(["netperf", ...args]);
export const stockNetserver = (args: string[]): Proc => run(["netserver", ...args]);
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function hasStockNetperf(): boolean {
  try {
    const r = Bun.spawnSync(["netperf", "-V"], { stdout: "pipe", stderr: "pipe" });
    return /Netperf version 2\.7\.0/.test(r.stdout.toString());
  } catch {
    return false;
  }
}

/** Waits until a TCP connect to the port succeeds (a server is listening), at most `ms`. */
export async function waitListening(port: number, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect({ host: "127.0.0.1", port }, () => {
        s.destroy();
        resolve(true);
      });
      s.on("error", () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > end) throw new Error(`nothing listens on ${port} after ${ms} ms`);
    await sleep(50);
  }
}

/** Runs the client to completion within `limitMs` (killed after that). */
export async function finish(p: Proc, limitMs: number): Promise<Finished> {
  const t = setTimeout(() => p.kill(), limitMs);
  const r = await p.done;
  clearTimeout(t);
  return r;
}

/** `NAME=value` lines of netperf -k output. */
export function keyvals(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line);
    if (m) out[m[1]!] = m[2]!;
  }
  return out;
}

/** Sends raw bytes on a fresh control connection; resolves with what came back before the server closed or `ms`. */
export function rawExchange(port: number, bytes: Uint8Array, ms: number): Promise<{ reply: Buffer; closed: boolean }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let closed = false;
    const s = connect({ host: "127.0.0.1", port }, () => s.write(bytes));
    s.on("data", (d) => chunks.push(Buffer.from(d)));
    s.on("close", () => {
      closed = true;
      clearTimeout(t);
      resolve({ reply: Buffer.concat(chunks), closed });
    });
    s.on("error", () => {});
    const t = setTimeout(() => {
      s.destroy();
      resolve({ reply: Buffer.concat(chunks), closed });
    }, ms);
  });
}
