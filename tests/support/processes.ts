/**
 * Child processes for the live tests: a command bounded in time and killed by pid, its output collected, and
 * readiness read from /proc/net (no probe connection, which a server would serve or, with --allow, log as refused).
 */
import { readFileSync } from "node:fs";
import type { z } from "zod";

export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface Proc {
  done: Promise<Finished>;
  stdout(): string;
  stderr(): string;
  kill(signal?: NodeJS.Signals): void;
  pid: number;
}

export function spawnProc(cmd: string[], limitMs = 30_000, env?: Record<string, string>): Proc {
  // process.env as it is now: Bun.spawn's default is the environment this process started with.
  const p = Bun.spawn(cmd, { stdout: "pipe", stderr: "pipe", env: { ...process.env, ...env } });
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
  return { done, stdout: () => stdout, stderr: () => stderr, kill: (signal) => p.kill(signal), pid: p.pid };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A finished command's stdout as the JSON document `schema` reads; a failure quotes what it printed. */
export function jsonDoc<S extends z.ZodType>(schema: S, f: Finished): z.infer<S> {
  let doc: unknown;
  try {
    doc = JSON.parse(f.stdout);
  } catch {
    throw new Error(`not a JSON document (exit ${f.code}):\n${f.stdout}\n${f.stderr}`);
  }
  return schema.parse(doc);
}

export function hasTool(cmd: string[], pattern: RegExp): boolean {
  try {
    const r = Bun.spawnSync(cmd, { stdout: "pipe", stderr: "pipe" });
    return pattern.test(r.stdout.toString() + r.stderr.toString());
  } catch {
    return false;
  }
}

/** Sockets whose local port is `port` in `state` as /proc/net shows it (TCP: 0A LISTEN, 01 ESTABLISHED; UDP bound: 07). */
function socketsAt(port: number, proto: "tcp" | "udp", state: string): number {
  const hex = port.toString(16).toUpperCase().padStart(4, "0");
  const re = new RegExp(`:${hex} [0-9A-F]+:[0-9A-F]{4} ${state} `);
  let n = 0;
  for (const f of [`/proc/net/${proto}`, `/proc/net/${proto}6`]) {
    try {
      n += readFileSync(f, "latin1").split("\n").filter((l) => re.test(l)).length;
    } catch {
      // no IPv6 on this host
    }
  }
  return n;
}

const bound = (port: number, proto: "tcp" | "udp"): boolean => socketsAt(port, proto, proto === "tcp" ? "0A" : "07") > 0;

/** Waits until `count` connections to the server listening on `port` are established at once, at most `ms`. */
export async function waitConnected(port: number, count = 1, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (socketsAt(port, "tcp", "01") < count) {
    if (Date.now() > end) throw new Error(`not ${count} connections to TCP port ${port} after ${ms} ms`);
    await sleep(10);
  }
}

/** Local ports of every TCP and UDP socket on this host, in any state (an ephemeral client socket holds its port too). */
function portsInUse(): Set<number> {
  const used = new Set<number>();
  for (const f of ["/proc/net/tcp", "/proc/net/tcp6", "/proc/net/udp", "/proc/net/udp6"]) {
    try {
      for (const l of readFileSync(f, "latin1").split("\n").slice(1)) {
        // Any state: a TIME_WAIT socket on the port also stops our listeners from binding it (Bun's listen).
        const m = /^\s*\d+: [0-9A-F]+:([0-9A-F]{4}) /.exec(l);
        if (m) used.add(parseInt(m[1]!, 16));
      }
    } catch {
      // no IPv6 on this host
    }
  }
  return used;
}

/** Ports this process has handed out: a test may pick twice before it binds the first. */
const handedOut = new Set<number>();

/**
 * Where a test's range in the kernel's ephemeral range (32768-60999) has no free run: a burst of short connections
 * (TCP_CRR makes ~10,000 a second) leaves that whole range in TIME_WAIT for a minute. Below it, nothing takes ports
 * at random.
 */
const FALLBACK = { from: 13000, to: 16000 } as const;

/**
 * The first `count` consecutive ports in [from, to) that no socket uses now and this process has not handed out
 * before, or else in the fallback range. Test ranges partly fall in the kernel's ephemeral range, where other
 * processes' client sockets take ports at random and a fixed port may not bind.
 */
export function freePorts(from: number, to: number, count: number, alsoAt: readonly number[] = []): number {
  const used = portsInUse();
  const free = (p: number) => !used.has(p) && !handedOut.has(p);
  // `alsoAt`: offsets where `count` more ports must be free too (ntttcp's Windows token ports, data port + 1000).
  const at = (p: number) => [0, ...alsoAt].flatMap((o) => Array.from({ length: count }, (_, k) => p + o + k));
  for (const [lo, hi] of [[from, to], [FALLBACK.from, FALLBACK.to]] as const) {
    for (let p = lo; p + count <= hi; p++) {
      if (!at(p).every(free)) continue;
      for (const q of at(p)) handedOut.add(q);
      return p;
    }
  }
  throw new Error(`no ${count} free consecutive ports in ${from}-${to - 1} nor in ${FALLBACK.from}-${FALLBACK.to - 1}`);
}

/** Fails at once when something already uses `port`: a leftover server would answer instead of ours. */
export function assertFree(port: number, proto: "tcp" | "udp" = "tcp"): void {
  if (bound(port, proto)) throw new Error(`${proto} port ${port} is already in use by another process: stop it, or move this test's port`);
}

export async function waitBound(port: number, proto: "tcp" | "udp" = "tcp", ms = 8000): Promise<void> {
  const end = Date.now() + ms;
  while (!bound(port, proto)) {
    if (Date.now() > end) throw new Error(`nothing listens on ${proto} port ${port} after ${ms} ms`);
    await sleep(25);
  }
}

/** Waits until `text()` matches (a server's log line), at most `ms`. */
export async function waitFor(text: () => string, pattern: RegExp, ms = 8000): Promise<void> {
  const end = Date.now() + ms;
  while (!pattern.test(text())) {
    if (Date.now() > end) throw new Error(`no ${pattern} after ${ms} ms in:\n${text()}`);
    await sleep(25);
  }
}
