/**
 * Helpers for the signal tests: anyperf from source (`bun main.ts ...`, as a user runs it) or a stock peer in a child
 * process, a signal sent to it mid-run, and what it printed and how it exited. Ports 20000-20999 only.
 */
import { mkdtempSync, readdirSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..", "..");
const MAIN = join(ROOT, "main.ts");
const BUN = join(ROOT, "node_modules", ".bin", "bun");

export interface Finished {
  code: number | null;
  /** The signal that killed it, when it did not exit on its own. */
  signal: string | null;
  stdout: string;
  stderr: string;
  /** Milliseconds from the (first) signal to the exit; undefined when no signal was sent. */
  afterSignalMs?: number;
}

export interface Child {
  readonly pid: number;
  /** Everything printed to stdout so far. */
  readonly out: () => string;
  done: Promise<Finished>;
  signal(name: "SIGINT" | "SIGTERM" | "SIGALRM"): void;
  /** Kills it if it still runs (cleanup after a failed expectation). */
  kill(): void;
}

function spawnChild(cmd: string[], o: { cwd?: string; env?: Record<string, string> } = {}): Child {
  const p = Bun.spawn(cmd, { stdout: "pipe", stderr: "pipe", cwd: o.cwd, env: { ...process.env, ...o.env } });
  let out = "";
  let signalledAt: number | undefined;
  const drain = async (s: ReadableStream<Uint8Array>, add: (t: string) => void) => {
    const dec = new TextDecoder();
    for await (const chunk of s) add(dec.decode(chunk, { stream: true }));
  };
  let err = "";
  const done = (async () => {
    await Promise.all([drain(p.stdout, (t) => (out += t)), drain(p.stderr, (t) => (err += t)), p.exited]);
    const afterSignalMs = signalledAt === undefined ? undefined : performance.now() - signalledAt;
    return { code: p.signalCode ? null : p.exitCode, signal: p.signalCode === null ? null : String(p.signalCode), stdout: out, stderr: err, afterSignalMs };
  })();
  return {
    pid: p.pid,
    out: () => out,
    done,
    signal: (name) => {
      signalledAt ??= performance.now();
      p.kill(name);
    },
    kill: () => {
      if (p.exitCode === null && p.signalCode === null) p.kill("SIGKILL");
    },
  };
}

/** `bun main.ts <args>`. */
export function anyperf(args: string[], o: { cwd?: string; env?: Record<string, string> } = {}): Child {
  return spawnChild([BUN, MAIN, ...args], o);
}

/** A stock tool from PATH (iperf3, iperf, netperf, netserver). */
export function stock(cmd: string, args: string[], o: { cwd?: string } = {}): Child {
  return spawnChild([cmd, ...args], o);
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Resolves once `test(stdout)` holds, or rejects after `ms` (so a signal is only sent once the run measures). */
export async function waitFor(c: Child, test: (out: string) => boolean, ms = 10_000): Promise<void> {
  const end = performance.now() + ms;
  while (!test(c.out())) {
    if (performance.now() > end) throw new Error(`timed out waiting; stdout so far:\n${c.out().slice(-2000)}`);
    await sleep(20);
  }
}

/** Resolves once something accepts TCP connections on 127.0.0.1:port. */
export async function waitListening(port: number, ms = 10_000): Promise<void> {
  const end = performance.now() + ms;
  for (;;) {
    const ok = await new Promise<boolean>((r) => {
      const s = connect({ host: "127.0.0.1", port }, () => (s.destroy(), r(true)));
      s.on("error", () => r(false));
    });
    if (ok) return;
    if (performance.now() > end) throw new Error(`nothing listens on 127.0.0.1:${port} after ${ms} ms`);
    await sleep(30);
  }
}

/** Sends `name` after `ms`, and waits for the exit (at most `limitMs` after the signal, else it is killed). */
export async function interruptAfter(c: Child, ms: number, name: "SIGINT" | "SIGTERM" | "SIGALRM" = "SIGINT", limitMs = 10_000): Promise<Finished> {
  await sleep(ms);
  c.signal(name);
  const t = setTimeout(() => c.kill(), limitMs);
  try {
    return await c.done;
  } finally {
    clearTimeout(t);
  }
}

/** A fresh directory for a test's output files. */
export const scratch = () => mkdtempSync(join(tmpdir(), "anyperf-signals-"));

/** Temp files the atomic writer would leave behind if it failed to clean up. */
export const tempLeftovers = (dir: string) => readdirSync(dir).filter((n) => n.endsWith(".tmp"));

/** Fails with what the process printed (the assertion message alone rarely says why a run went wrong). */
export function dump(f: Finished): string {
  return `exit ${f.code} signal ${f.signal}\n--- stdout ---\n${f.stdout.slice(-3000)}\n--- stderr ---\n${f.stderr.slice(-3000)}`;
}
