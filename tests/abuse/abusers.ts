/**
 * Live abuse against a running anyperf server, loopback only and bounded in count and time: idle connections,
 * connections that stall mid-message, floods of bogus connects, oversized length fields, HTTP slowloris, and a stock
 * client SIGKILLed mid-test. Each abuser returns counts so a test can show the abuse really happened (a flood that
 * never connected proves nothing). Server processes are started with the interop harnesses; this file only abuses
 * them and reads their /proc entries.
 */
import { readFileSync } from "node:fs";
import { createSocket } from "node:dgram";
import { connect, type Socket } from "node:net";

const HOST = "127.0.0.1";
export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Connections held open on purpose; `stop()` closes ours and tells how many the server closed first. */
export interface Held {
  /** Connections that were established. */
  opened(): number;
  /** Of those, how many the server closed (FIN or RST) while we held them. */
  closedByServer(): number;
  /** Bytes the server sent back on them (e.g. an error state). */
  repliedBytes(): number;
  stop(): Promise<{ opened: number; closedByServer: number; repliedBytes: number }>;
}

interface HeldConn {
  socket: Socket;
  established: boolean;
  serverClosed: boolean;
}

/**
 * Opens `n` connections to `port`; each, once connected, runs `feed` (write a prefix, dribble bytes, or nothing).
 * A server that refuses or drops connections is not an error here: the counts say what happened.
 */
function hold(port: number, n: number, feed: (s: Socket, stopped: () => boolean) => void): Held {
  const conns: HeldConn[] = [];
  let replied = 0;
  let stopped = false;
  for (let i = 0; i < n; i++) {
    const c: HeldConn = { socket: connect({ host: HOST, port }), established: false, serverClosed: false };
    c.socket.on("connect", () => {
      c.established = true;
      feed(c.socket, () => stopped || c.serverClosed);
    });
    c.socket.on("data", (d) => (replied += d.length));
    c.socket.on("end", () => (c.serverClosed = true));
    c.socket.on("close", () => {
      if (!stopped && c.established) c.serverClosed = true;
    });
    c.socket.on("error", () => {});
    conns.push(c);
  }
  const opened = () => conns.filter((c) => c.established).length;
  const closedByServer = () => conns.filter((c) => c.established && c.serverClosed).length;
  return {
    opened,
    closedByServer,
    repliedBytes: () => replied,
    async stop() {
      const result = { opened: opened(), closedByServer: closedByServer(), repliedBytes: replied };
      stopped = true;
      for (const c of conns) c.socket.destroy();
      await sleep(50);
      return result;
    },
  };
}

/** `n` connections that send nothing at all. */
export function idleConnections(port: number, n: number): Held {
  return hold(port, n, () => {});
}

/** `n` connections that send a valid beginning of a message (`prefix`), then nothing more. */
export function stalledConnections(port: number, n: number, prefix: Uint8Array): Held {
  return hold(port, n, (s) => void s.write(prefix));
}

/** HTTP slowloris: `n` connections dribbling a request's headers one byte per `everyMs`, never finishing them. */
export function slowloris(port: number, n: number, everyMs: number): Held {
  const head = `GET /status HTTP/1.1\r\nHost: ${HOST}:${port}\r\nUser-Agent: slowloris\r\n`;
  return hold(port, n, (s, stopped) => {
    let i = 0;
    const step = () => {
      if (stopped() || s.destroyed) return;
      // After the real headers, an endless header line: the blank line that ends the request never comes.
      s.write(i < head.length ? head[i]! : "X-a: b\r\n"[(i - head.length) % 8]!);
      i++;
      setTimeout(step, everyMs);
    };
    step();
  });
}

export interface FloodResult {
  attempted: number;
  connected: number;
  /** Refused, reset or timed out before connecting. */
  failed: number;
}

/**
 * `total` bogus connects, at most `concurrency` at a time. Odd ones close at once, even ones send `garbage(i)` and
 * then close; each connection lives at most `lifeMs`.
 */
export async function bogusConnects(port: number, o: { total: number; concurrency: number; garbage?: (i: number) => Uint8Array; lifeMs?: number }): Promise<FloodResult> {
  const life = o.lifeMs ?? 2000;
  const garbage = o.garbage ?? randomBytes;
  let next = 0;
  let connected = 0;
  let failed = 0;
  const one = (i: number) =>
    new Promise<void>((resolve) => {
      const s = connect({ host: HOST, port });
      let ok = false;
      const done = () => {
        clearTimeout(t);
        s.destroy();
        resolve();
      };
      const t = setTimeout(() => {
        if (!ok) failed++;
        done();
      }, life);
      s.on("connect", () => {
        ok = true;
        connected++;
        if (i % 2 === 1) return done();
        s.end(garbage(i));
      });
      s.on("close", done);
      s.on("error", () => {
        if (!ok) failed++;
        done();
      });
      s.on("data", () => {});
    });
  const lane = async () => {
    while (next < o.total) await one(next++);
  };
  await Promise.all(Array.from({ length: Math.min(o.concurrency, o.total) }, lane));
  return { attempted: o.total, connected, failed };
}

/** `n` datagrams of garbage to a UDP port (random lengths up to `maxLen`). */
export async function udpGarbage(port: number, n: number, maxLen = 1500): Promise<number> {
  const sock = createSocket("udp4");
  let sent = 0;
  try {
    for (let i = 0; i < n; i++) {
      await new Promise<void>((resolve) => sock.send(randomBytes(1 + (i * 7919) % maxLen), port, HOST, () => resolve()));
      sent++;
    }
  } finally {
    sock.close();
  }
  return sent;
}

export function randomBytes(i: number): Uint8Array {
  return crypto.getRandomValues(new Uint8Array(1 + ((i * 131) % 700)));
}

export interface Exchange {
  reply: Uint8Array;
  /** The server closed the connection before `ms` ran out. */
  closed: boolean;
  ms: number;
}

/**
 * Sends `bytes` on a fresh connection and keeps it open (sending nothing more) until the server closes it or `ms`
 * passes: a server that reads a huge length field must neither wait for the data forever nor allocate for it.
 */
export function exchange(port: number, bytes: Uint8Array, ms: number): Promise<Exchange> {
  const start = performance.now();
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const s = connect({ host: HOST, port }, () => s.write(bytes));
    let settled = false;
    const finish = (closed: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(t);
      s.destroy();
      resolve({ reply: new Uint8Array(Buffer.concat(chunks)), closed, ms: performance.now() - start });
    };
    s.on("data", (d) => chunks.push(Buffer.from(d)));
    s.on("close", () => finish(true));
    s.on("error", () => {});
    const t = setTimeout(() => finish(false), ms);
  });
}

export interface Killed {
  /** Output the client printed before it was killed. */
  out: string;
  signal: string | null;
  code: number | null;
}

/**
 * Runs a stock client and SIGKILLs it once `ready` matches its output (the test is under way), or after `afterMs`
 * at the latest: no goodbye on the control connection, the data connections simply die.
 */
export async function killMidTest(cmd: string[], o: { ready?: RegExp; afterMs: number }): Promise<Killed & { sawReady: boolean }> {
  const p = Bun.spawn(cmd, { stdout: "pipe", stderr: "pipe" });
  let out = "";
  const pump = async (s: ReadableStream<Uint8Array>) => {
    const dec = new TextDecoder();
    for await (const c of s) out += dec.decode(c, { stream: true });
  };
  const pumps = Promise.all([pump(p.stdout), pump(p.stderr)]);
  const end = Date.now() + o.afterMs;
  let sawReady = false;
  while (Date.now() < end && p.exitCode === null) {
    if (o.ready?.test(out)) {
      sawReady = true;
      break;
    }
    await sleep(20);
  }
  // A little more running time once the test is live, so streams carry data when they die.
  if (sawReady) await sleep(500);
  p.kill("SIGKILL");
  await p.exited;
  await pumps;
  return { out, signal: p.signalCode === null ? null : String(p.signalCode), code: p.exitCode, sawReady };
}

/** Resident set size of a process in KiB (VmRSS), or 0 when it is gone. */
export function rssKiB(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/** Open file descriptors of a process (sockets included). */
export function fdCount(pid: number): number {
  try {
    return Bun.spawnSync(["ls", `/proc/${pid}/fd`]).stdout.toString().split("\n").filter((l) => l !== "").length;
  } catch {
    return 0;
  }
}

/** True while the process exists (not reaped). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * What a server printed must not hold a JavaScript stack trace, an uncaught-error banner or a runtime warning (e.g. TimeoutOverflowWarning): every failure of a
 * peer is one line. Returns the offending lines (empty when clean).
 */
export function stackTraceLines(text: string): string[] {
  return text.split("\n").filter((l) => /^\s+at .*(\(|\s)\S+:\d+:\d+\)?\s*$/.test(l) || /^\s+at <anonymous>/.test(l) || /Unhandled|uncaught|panic|^error: |Warning: /i.test(l));
}

/** Generous growth bound for a server's RSS over a bounded abuse run: twice the start plus 256 MiB. */
export function rssBoundKiB(startKiB: number): number {
  return 2 * startKiB + 256 * 1024;
}
