import * as net from "node:net";

/**
 * A stand-in for NTttcp for Windows 5.40, written from docs/protocols/ntttcp-windows.md §3–§5 because no Windows
 * host is available: it is NOT the Windows program. TCP only. Receiver: one listener per thread on base+i, exactly
 * one accept each; with sync, after every thread accepted, a token listener on base+i+offset that sends one 'X' and
 * reads one byte. Sender: thread i connects base+i (100 × 100 ms retries), then its token connection, then sends
 * 64 KiB buffers of 'A'. Both time warm-up / run / cool-down locally and count bytes only while recording.
 */

export interface EmulatorOptions {
  host: string;
  base: number;
  threads: number;
  sync: boolean;
  /** Data port + this = token port; 1000 in the real product. */
  offset: number;
  warmupS: number;
  runS: number;
  cooldownS: number;
}

export interface EmulatorResult {
  recordedBytes: number;
  realtimeS: number;
  /** "Unexpected disconnect" threads (peer closed before the end), as 5.40 would log them. */
  unexpectedDisconnects: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function listenOnce(host: string, port: number): Promise<{ server: net.Server; accepted: Promise<net.Socket> }> {
  return new Promise((resolve, reject) => {
    let take!: (s: net.Socket) => void;
    const accepted = new Promise<net.Socket>((r) => (take = r));
    let got = false;
    const server = net.createServer((s) => {
      if (got) return; // later connections are never read (they stay in the backlog on Windows)
      got = true;
      take(s);
    });
    server.once("error", reject);
    server.listen({ host, port, backlog: 0 }, () => resolve({ server, accepted }));
  });
}

async function connectRetry(host: string, port: number): Promise<net.Socket> {
  for (let i = 0; i < 100; i++) {
    try {
      return await new Promise<net.Socket>((resolve, reject) => {
        const s = net.connect({ host, port }, () => resolve(s));
        s.once("error", reject);
      });
    } catch {
      await sleep(100);
    }
  }
  throw new Error(`connect to ${host}:${port} failed 100 times`);
}

/** One token exchange on an open socket: send 'X' first, then read one byte. */
function token(s: net.Socket): Promise<void> {
  return new Promise((resolve, reject) => {
    s.once("data", () => {
      s.end();
      resolve();
    });
    s.once("close", () => reject(new Error("token connection closed early")));
    s.write(Uint8Array.of(0x58));
  });
}

export async function emulateReceiver(o: EmulatorOptions, ready: () => void = () => {}): Promise<EmulatorResult> {
  const listeners = await Promise.all(Array.from({ length: o.threads }, (_, i) => listenOnce(o.host, o.base + i)));
  ready();
  const socks = await Promise.all(listeners.map((l) => l.accepted));
  if (o.sync) {
    const tokens = await Promise.all(Array.from({ length: o.threads }, (_, i) => listenOnce(o.host, o.base + i + o.offset)));
    await Promise.all(tokens.map(async (t) => token(await t.accepted)));
    for (const t of tokens) t.server.close();
  }
  let recording = false;
  let finished = false;
  let recorded = 0;
  let unexpected = 0;
  for (const s of socks) {
    s.on("data", (d: Buffer) => {
      if (recording) recorded += d.byteLength;
    });
    s.on("end", () => {
      if (!finished) unexpected++;
    });
    s.on("error", () => {});
  }
  const realtimeS = await timedPhases(o, (on) => (recording = on));
  finished = true;
  for (const s of socks) s.destroy();
  for (const l of listeners) l.server.close();
  return { recordedBytes: recorded, realtimeS, unexpectedDisconnects: unexpected };
}

/** Warm-up, the measured run (counting on only during it) and cool-down; returns the run's real length in seconds. */
async function timedPhases(o: EmulatorOptions, record: (on: boolean) => void): Promise<number> {
  await sleep(o.warmupS * 1000);
  record(true);
  const t0 = performance.now();
  await sleep(o.runS * 1000);
  record(false);
  const realtimeS = (performance.now() - t0) / 1000;
  await sleep(o.cooldownS * 1000);
  return realtimeS;
}

/** writtenBytes: every write, the measured run's and the others (the first burst, before its clock starts, among them). */
export async function emulateSender(o: EmulatorOptions): Promise<EmulatorResult & { writtenBytes: number }> {
  const socks = await Promise.all(Array.from({ length: o.threads }, (_, i) => connectRetry(o.host, o.base + i)));
  if (o.sync) await Promise.all(Array.from({ length: o.threads }, async (_, i) => token(await connectRetry(o.host, o.base + i + o.offset))));
  const buf = Buffer.alloc(65536, 0x41);
  let recording = false;
  let stop = false;
  let recorded = 0;
  let written = 0;
  const pumps = socks.map(
    (s) =>
      new Promise<void>((resolve) => {
        // A reset from the receiver is a normal end for Windows.
        s.on("error", () => resolve());
        const pump = () => {
          while (!stop) {
            if (recording) recorded += buf.byteLength;
            written += buf.byteLength;
            if (!s.write(buf)) return void s.once("drain", pump);
          }
          s.end();
          resolve();
        };
        pump();
      }),
  );
  const realtimeS = await timedPhases(o, (on) => (recording = on));
  stop = true;
  for (const s of socks) s.emit("drain");
  await Promise.race([Promise.all(pumps), sleep(2000)]);
  for (const s of socks) s.destroy();
  return { recordedBytes: recorded, realtimeS, unexpectedDisconnects: 0, writtenBytes: written };
}
