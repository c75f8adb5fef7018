import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { StockPeer } from "../support/stock-peers.ts";
import { freePorts } from "../support/processes.ts";

/** Process helpers for the iperf 2 interop tests: stock `iperf` and ours, each bounded in time, killed by pid. */

const CLI = join(import.meta.dir, "iperf2-cli.ts");

export interface Finished {
  code: number | null;
  out: string;
}

export interface Proc {
  done: Promise<Finished>;
  /** Output so far (stdout and stderr interleaved as they arrive per stream). */
  text(): string;
  kill(): void;
  pid: number;
}

function run(cmd: string[]): Proc {
  // process.env as it is now: Bun.spawn's default is the environment this process started with.
  const p = Bun.spawn(cmd, { stdout: "pipe", stderr: "pipe", env: process.env });
  let out = "";
  const pump = async (s: ReadableStream<Uint8Array>) => {
    const dec = new TextDecoder();
    for await (const chunk of s) out += dec.decode(chunk, { stream: true });
  };
  const done = Promise.all([pump(p.stdout), pump(p.stderr), p.exited]).then(([, , code]) => ({ code, out }));
  // A stock client may ignore SIGTERM (2.1.8's, blocked on a reset bounceback read): SIGKILL follows, so a test fails
  // on what it checks instead of hanging on `done`.
  const kill = () => {
    p.kill();
    setTimeout(() => p.exitCode === null && p.signalCode === null && p.kill("SIGKILL"), 3000).unref();
  };
  return { done, text: () => out, kill, pid: p.pid };
}

export const ours = (args: string[]): Proc => run([process.execPath, CLI, ...args]);
/** Through main.ts, for the global options it strips before the dialect parses (--http). */
export const oursMain = (args: string[]): Proc => run([process.execPath, join(import.meta.dir, "../../main.ts"), "iperf", ...args]);
export const stock = (args: string[]): Proc => run(["iperf", ...args]);
/** A given stock iperf 2 (the system's or a newer one, tests/support/stock-peers.ts). */
export const stockPeer =
  (peer: StockPeer) =>
  (args: string[]): Proc =>
    run([peer.command, ...args]);
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function hasStockIperf(): boolean {
  try {
    const r = Bun.spawnSync(["iperf", "-v"], { stdout: "pipe", stderr: "pipe" });
    return /iperf version 2\./.test(r.stderr.toString() + r.stdout.toString());
  } catch {
    return false;
  }
}

/** Waits until `p` printed `what` (a server's banner), at most `ms`. */
export async function waitFor(p: Proc, what: RegExp, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!what.test(p.text())) {
    if (Date.now() > end) throw new Error(`did not see ${what} within ${ms} ms; output so far:\n${p.text()}`);
    await sleep(20);
  }
}

/** A server started first, a client against it; the client must finish within `limitMs`; the server is killed after. */
export async function session(server: Proc, banner: RegExp, client: () => Proc, limitMs: number): Promise<{ server: string; client: Finished }> {
  try {
    await waitFor(server, banner);
    const c = client();
    const timer = setTimeout(() => c.kill(), limitMs);
    const finished = await c.done;
    clearTimeout(timer);
    // The server prints its last lines right after the client's last packet.
    await sleep(400);
    return { server: server.text(), client: finished };
  } finally {
    server.kill();
    await server.done;
  }
}

export interface CsvLine {
  clientPort: number;
  serverPort: number;
  id: number;
  start: number;
  end: number;
  bytes: number;
  udp?: { jitterMs: number; lost: number; total: number };
}

/** `-y C` lines; the client endpoint comes first on both sides, so lines pair up by its port. */
export function csv(text: string): CsvLine[] {
  return text
    .split("\n")
    .filter((l) => /^\d{14},/.test(l))
    .map((l) => {
      const f = l.split(",");
      const [start, end] = f[6]!.split("-").map(Number);
      const line: CsvLine = { clientPort: Number(f[2]), serverPort: Number(f[4]), id: Number(f[5]), start: start!, end: end!, bytes: Number(f[7]) };
      if (f.length >= 14) line.udp = { jitterMs: Number(f[9]), lost: Number(f[10]), total: Number(f[11]) };
      return line;
    });
}

/** Report lines "[ ID] a-b sec  <transfer>  <bandwidth> ..." keyed by id. */
export function reportLines(text: string): { id: string; line: string }[] {
  return text
    .split("\n")
    // 2.1.8 and 2.2.1 print 4 decimals; iperf 2's master (2.2.n) went back to 2.
    .map((line) => ({ line, m: /^\[ *(\*?\d+|SUM)\] \d+\.\d+-\s*\d+\.\d+ sec /.exec(line) }))
    .filter((x) => x.m !== null)
    .map((x) => ({ id: x.m![1]!, line: x.line }));
}

/** The part of a report line after the interval: "  1.38 MBytes  11.5 Mbits/sec ..." */
export function figures(line: string): string {
  return line.replace(/^\[[^\]]+\] \d+\.\d+-\s*\d+\.\d+ sec/, "").trim();
}

/** True once something listens on the port (TCP LISTEN, or a bound UDP socket), from /proc/net: no probe packet. */
export function listening(port: number, proto: "tcp" | "udp"): boolean {
  const hex = port.toString(16).toUpperCase().padStart(4, "0");
  for (const file of [`/proc/net/${proto}`, `/proc/net/${proto}6`]) {
    let text = "";
    try {
      text = readFileSync(file, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f[1]?.endsWith(`:${hex}`) && (proto === "udp" || f[3] === "0A")) return true;
    }
  }
  return false;
}

export async function waitListening(port: number, proto: "tcp" | "udp", ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!listening(port, proto)) {
    if (Date.now() > end) throw new Error(`nothing listens on ${proto} port ${port} after ${ms} ms`);
    await sleep(20);
  }
}

/**
 * A stock server (`peer`, `args` plus `-p` on a free port of `ports`) listening on `proto`, then `body` against it;
 * the server is killed afterwards, whatever `body` did.
 */
export async function withStockServer(
  peer: StockPeer, args: string[], proto: "tcp" | "udp", ports: [number, number], body: (port: number, server: Proc) => Promise<void>,
): Promise<void> {
  const port = freePorts(ports[0], ports[1], 1);
  const srv = stockPeer(peer)([...args, "-p", String(port)]);
  try {
    await waitListening(port, proto, 30_000);
    await body(port, srv);
  } finally {
    srv.kill();
    await srv.done;
  }
}
