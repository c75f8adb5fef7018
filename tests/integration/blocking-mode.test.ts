import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, readdirSync, readlinkSync } from "node:fs";
import { DataPlane } from "../../src/engine/data-plane.ts";
import { WorkerPool } from "../../src/engine/worker-pool.ts";
import type { StreamSpecInput } from "../../src/stream-spec.ts";
import { bucketOf, count, mean } from "../../src/histogram.ts";

/**
 * Request/response streams and bulk receivers alone on their Worker run in blocking mode (src/worker/blocking-socket.ts). These
 * tests hold that mode to the event-loop path's contract: both ends count the same transactions, limits, stops and
 * the peer's close end the stream as before, and a stream that gets company on its Worker goes back to the event
 * loop without losing a transaction.
 */

afterAll(() => WorkerPool.shutdown());
WorkerPool.shared({ workers: 2 });

const server = (extra: Partial<Extract<StreamSpecInput, { kind: "rr-server" }>> = {}): StreamSpecInput => ({
  kind: "rr-server",
  id: 0,
  transport: "tcp",
  listen: { host: "127.0.0.1", port: 0 },
  requestSize: 1,
  responseSize: 1,
  ...extra,
});
const client = (port: number, extra: Partial<Extract<StreamSpecInput, { kind: "rr-client" }>> = {}): StreamSpecInput => ({
  kind: "rr-client",
  id: 0,
  transport: "tcp",
  connect: { host: "127.0.0.1", port },
  requestSize: 1,
  responseSize: 1,
  ...extra,
});

async function pair(c: Partial<Extract<StreamSpecInput, { kind: "rr-client" }>> = {}, s: Partial<Extract<StreamSpecInput, { kind: "rr-server" }>> = {}) {
  const srv = await DataPlane.open([server(s)]);
  const cli = await DataPlane.open([client(srv.localPorts[0]!, c)]);
  srv.go();
  cli.go();
  return { srv, cli };
}

const tx = (p: DataPlane) => p.snapshot().streams[0]!.transactions;

async function settled(check: () => boolean, ms = 2000): Promise<void> {
  for (const end = Date.now() + ms; !check() && Date.now() < end; ) await Bun.sleep(10);
}

describe("request/response in blocking mode", () => {
  test("stop: both ends count the same transactions, every one timed", async () => {
    const { srv, cli } = await pair({ requestSize: 100, responseSize: 200, inFlight: 2 }, { requestSize: 100, responseSize: 200 });
    await Bun.sleep(400);
    cli.stop();
    await cli.ended;
    expect(cli.ends[0]!.reason).toBe("stopped");
    const n = tx(cli);
    await settled(() => tx(srv) === n);
    expect(n).toBeGreaterThan(1000);
    expect(tx(srv)).toBe(n);
    const snap = cli.snapshot().streams[0]!;
    expect(snap.bytes).toBe(n * 300);
    expect(srv.snapshot().streams[0]!.bytes).toBe(n * 300);
    srv.stop();
    await srv.ended;
  });

  test("one request in flight (rr-loops.c where bun:ffi's cc is there): both ends count the same, bytes exact", async () => {
    const { srv, cli } = await pair();
    await Bun.sleep(400);
    cli.stop();
    await cli.ended;
    const n = tx(cli);
    await settled(() => tx(srv) === n);
    expect(n).toBeGreaterThan(1000);
    expect(tx(srv)).toBe(n);
    const snap = cli.snapshot(true).streams[0]!;
    expect(snap.bytes).toBe(n * 2);
    expect(srv.snapshot().streams[0]!.bytes).toBe(n * 2);
    // Every transaction timed into the histogram, in the bucket histogram.ts puts it in: the fastest and slowest
    // land exactly in bucketOf(min) and bucketOf(max), and the buckets' mean is within 1 % of the exact mean.
    const h = snap.histogram;
    expect(count(h)).toBe(n);
    expect(h.findIndex((x) => x > 0)).toBe(bucketOf(snap.latencyMinUs));
    expect(h.findLastIndex((x) => x > 0)).toBe(bucketOf(snap.latencyMaxUs));
    expect(Math.abs(mean(h) / (snap.latencySumUs / n) - 1)).toBeLessThan(0.01);
    srv.stop();
    await srv.ended;
  });

  test("requests and responses that arrive in parts: the loops hand them over and nothing is lost", async () => {
    const sizes = { requestSize: 300_000, responseSize: 200_000 };
    const { srv, cli } = await pair(sizes, sizes);
    await Bun.sleep(400);
    cli.stop();
    await cli.ended;
    const n = tx(cli);
    await settled(() => tx(srv) === n);
    expect(n).toBeGreaterThan(50);
    expect(tx(srv)).toBe(n);
    expect(cli.snapshot().streams[0]!.bytes).toBe(n * 500_000);
    expect(srv.snapshot().streams[0]!.bytes).toBe(n * 500_000);
    srv.stop();
    await srv.ended;
  });

  test("a transaction limit ends the client with exactly that many", async () => {
    const { srv, cli } = await pair({ limitTransactions: 20000 });
    await cli.ended;
    expect(cli.ends[0]!.reason).toBe("limit");
    expect(tx(cli)).toBe(20000);
    srv.stop();
    await srv.ended;
    expect(tx(srv)).toBe(20000);
  });

  test("the server stopping ends the client with eof, not a hang", async () => {
    const { srv, cli } = await pair();
    await Bun.sleep(200);
    srv.stop();
    await srv.ended;
    await Promise.race([cli.ended, Bun.sleep(5000)]);
    expect(cli.ends[0]?.reason).toBe("eof");
  });

  test("company on the Worker: the streams go back to the event loop and keep counting", async () => {
    const { srv, cli } = await pair();
    await Bun.sleep(150);
    // Two more streams: whichever Workers they land on, both blocking streams now share theirs.
    const extra = await DataPlane.open([
      { kind: "udp-recv", id: 0, listen: { host: "127.0.0.1", port: 0 }, datagramSize: 64, format: "none" },
      { kind: "udp-recv", id: 1, listen: { host: "127.0.0.1", port: 0 }, datagramSize: 64, format: "none" },
    ]);
    await Bun.sleep(100);
    const before = tx(cli);
    await Bun.sleep(300);
    expect(tx(cli)).toBeGreaterThan(before + 500);
    cli.stop();
    await cli.ended;
    await settled(() => tx(srv) === tx(cli));
    expect(tx(srv)).toBe(tx(cli));
    extra.stop();
    srv.stop();
    await Promise.all([extra.ended, srv.ended]);
  });
});

describe("connect/request/response in blocking mode (TCP_CRR)", () => {
  test("without a limit (rr-loops.c where bun:ffi's cc is there): a connection per transaction, both ends agree", async () => {
    const sizes = { requestSize: 10, responseSize: 30 };
    const srv = await DataPlane.open([server({ closeAfterResponse: true, ...sizes })]);
    const cli = await DataPlane.open([client(srv.localPorts[0]!, { perTransactionConnect: true, ...sizes })]);
    srv.go();
    cli.go();
    await Bun.sleep(400);
    cli.stop();
    await cli.ended;
    const c = cli.snapshot().streams[0]!;
    expect(c.transactions).toBeGreaterThan(100);
    expect(c.sendErrors).toBe(0);
    expect(c.connections).toBe(c.transactions);
    expect(c.bytes).toBe(c.transactions * 40);
    // The server's counters are another thread's: a transaction's count and its bytes land one after the other.
    await settled(() => srv.snapshot().streams[0]!.transactions === c.transactions && srv.snapshot().streams[0]!.bytes === c.transactions * 40);
    const s = srv.snapshot().streams[0]!;
    expect(s.transactions).toBe(c.transactions);
    expect(s.bytes).toBe(c.transactions * 40);
    // A connect under way when the client stopped (rr-client's crrNext) completes after the stream has ended: the
    // client's final counts miss it, the server accepts (counts) it and reads its EOF, no transaction.
    expect(s.connections - c.connections).toBeGreaterThanOrEqual(0);
    expect(s.connections - c.connections).toBeLessThanOrEqual(1);
    srv.stop();
    await srv.ended;
  });

  test("every transaction is one connection; both ends agree; refused connects are counted, not fatal", async () => {
    const srv = await DataPlane.open([server({ closeAfterResponse: true, requestSize: 10, responseSize: 30 })]);
    const port = srv.localPorts[0]!;
    const cli = await DataPlane.open([client(port, { perTransactionConnect: true, requestSize: 10, responseSize: 30, limitTransactions: 2000 })]);
    srv.go();
    cli.go();
    await cli.ended;
    const c = cli.snapshot().streams[0]!;
    expect(cli.ends[0]!.reason).toBe("limit");
    expect(c.transactions).toBe(2000);
    expect(c.connections).toBe(2000);
    expect(c.bytes).toBe(2000 * 40);
    await settled(() => srv.snapshot().streams[0]!.transactions === 2000);
    expect(srv.snapshot().streams[0]!.connections).toBe(2000);
    srv.stop();
    await srv.ended;
    // Nobody listens now: connects are refused, counted as errors, and the client still stops when told.
    const lone = await DataPlane.open([client(port, { perTransactionConnect: true })]);
    lone.go();
    await Bun.sleep(100);
    lone.stop();
    await lone.ended;
    expect(lone.snapshot().streams[0]!.sendErrors).toBeGreaterThan(0);
    expect(lone.snapshot().streams[0]!.transactions).toBe(0);
  });
});

/** Whether this process's listening TCP socket on `port` is in blocking mode (O_NONBLOCK clear in its fdinfo). */
function listenerBlocking(port: number): boolean | undefined {
  const hex = port.toString(16).toUpperCase().padStart(4, "0");
  const inodes = new Set(
    ["/proc/self/net/tcp", "/proc/self/net/tcp6"].flatMap((f) =>
      readFileSync(f, "utf8").split("\n").slice(1).map((l) => l.trim().split(/\s+/)).filter((c) => c[1]?.endsWith(`:${hex}`) && c[3] === "0A").map((c) => c[9]!),
    ),
  );
  for (const fd of readdirSync("/proc/self/fd")) {
    let link: string;
    try {
      link = readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      continue;
    }
    const inode = /^socket:\[(\d+)\]$/.exec(link)?.[1];
    if (!inode || !inodes.has(inode)) continue;
    const flags = parseInt(/flags:\s*(\d+)/.exec(readFileSync(`/proc/self/fdinfo/${fd}`, "utf8"))![1]!, 8);
    return (flags & 0o4000) === 0;
  }
  return undefined;
}

describe("the TCP_CRR server's own blocking listener", () => {
  const crrServer = () => server({ closeAfterResponse: true, requestSize: 10, responseSize: 30 });

  test("alone on its Worker it listens in blocking mode; an idle and a slow client hold up no one", async () => {
    const srv = await DataPlane.open([crrServer()]);
    const port = srv.localPorts[0]!;
    srv.go();
    expect(listenerBlocking(port)).toBe(true);
    const idle = await Bun.connect({ hostname: "127.0.0.1", port, socket: { data() {} } });
    let slowGot = 0;
    const slowClosed = Promise.withResolvers<void>();
    const slow = await Bun.connect({ hostname: "127.0.0.1", port, socket: { data: (_s, d) => void (slowGot += d.byteLength), close: () => slowClosed.resolve() } });
    slow.write(new Uint8Array(5));
    const cli = await DataPlane.open([client(port, { perTransactionConnect: true, requestSize: 10, responseSize: 30, limitTransactions: 500 })]);
    cli.go();
    await cli.ended;
    expect(cli.ends[0]!.reason).toBe("limit");
    expect(tx(cli)).toBe(500);
    // The slow client's second half, well after the server stopped waiting for it: answered, then closed by us.
    await Bun.sleep(100);
    slow.write(new Uint8Array(5));
    await slowClosed.promise;
    expect(slowGot).toBe(30);
    await settled(() => tx(srv) === 501);
    const s = srv.snapshot().streams[0]!;
    expect(s.transactions).toBe(501);
    expect(s.connections).toBe(502);
    expect(s.bytes).toBe(501 * 40);
    idle.end();
    srv.stop();
    await srv.ended;
    // The port is free again at once.
    const again = await DataPlane.open([server({ closeAfterResponse: true, listen: { host: "127.0.0.1", port } })]);
    expect(again.localPorts[0]).toBe(port);
    again.stop();
    await again.ended;
  });

  test("with company on its Worker it still serves every connection", async () => {
    // Two listeners: the pool has two Workers, so at least one server shares its Worker with the other stream.
    const srv = await DataPlane.open([crrServer(), { ...crrServer(), id: 1 }]);
    srv.go();
    for (const port of srv.localPorts) {
      const cli = await DataPlane.open([client(port!, { perTransactionConnect: true, requestSize: 10, responseSize: 30, limitTransactions: 300 })]);
      cli.go();
      await cli.ended;
      expect(tx(cli)).toBe(300);
    }
    await settled(() => srv.snapshot().streams.every((x) => x.transactions === 300));
    expect(srv.snapshot().streams.map((x) => x.transactions)).toEqual([300, 300]);
    srv.stop();
    await srv.ended;
  });
});

describe("bulk receive in blocking mode", () => {
  test("reads of the spec's size, every byte counted, EOF ends the stream", async () => {
    const rx = await DataPlane.open([{ kind: "tcp-recv", id: 0, listen: { host: "127.0.0.1", port: 0 }, connections: 1, readSize: 1000, endOnEof: true }]);
    const tx = await DataPlane.open([{ kind: "tcp-send", id: 0, connect: { host: "127.0.0.1", port: rx.localPorts[0]! }, writeSize: 65536, limitBytes: 8 << 20 }]);
    rx.go();
    tx.go();
    await Promise.race([rx.ended, Bun.sleep(10_000)]);
    expect(rx.ends[0]?.reason).toBe("eof");
    const r = rx.snapshot().streams[0]!;
    expect(r.bytes).toBe(8 << 20);
    // Never more than readSize per read: at least bytes / 1000 reads.
    expect(r.packets).toBeGreaterThanOrEqual((8 << 20) / 1000);
  });
});

describe("bulk send in blocking mode", () => {
  test("a byte limit ends the sender with every byte delivered; fin-wait-eof waits for the receiver's close", async () => {
    const rx = await DataPlane.open([{ kind: "tcp-recv", id: 0, listen: { host: "127.0.0.1", port: 0 }, connections: 1, endOnEof: true }]);
    const tx = await DataPlane.open([
      { kind: "tcp-send", id: 0, connect: { host: "127.0.0.1", port: rx.localPorts[0]! }, writeSize: 1 << 20, limitBytes: 48 << 20, end: "fin-wait-eof" },
    ]);
    rx.go();
    tx.go();
    await Promise.race([Promise.all([tx.ended, rx.ended]), Bun.sleep(10_000)]);
    expect(tx.ends[0]?.reason).toBe("limit");
    expect(rx.ends[0]?.reason).toBe("eof");
    expect(tx.snapshot().streams[0]!.bytes).toBe(48 << 20);
    expect(rx.snapshot().streams[0]!.bytes).toBe(48 << 20);
  });

  test("the receiver going away ends an unlimited sender with eof", async () => {
    const rx = await DataPlane.open([{ kind: "tcp-recv", id: 0, listen: { host: "127.0.0.1", port: 0 }, connections: 1 }]);
    const tx = await DataPlane.open([{ kind: "tcp-send", id: 0, connect: { host: "127.0.0.1", port: rx.localPorts[0]! }, writeSize: 1 << 20 }]);
    rx.go();
    tx.go();
    await Bun.sleep(200);
    rx.stop();
    await rx.ended;
    await Promise.race([tx.ended, Bun.sleep(5000)]);
    expect(tx.ends[0]?.reason).toBe("eof");
    expect(tx.snapshot().streams[0]!.bytes).toBeGreaterThan(1 << 20);
  });
});

describe("UDP receive in blocking mode (recvmmsg batches)", () => {
  test("stamped datagrams: every one counted once, no loss or reordering invented, a zero-length marker still ends it", async () => {
    const rx = await DataPlane.open([{ kind: "udp-recv", id: 0, listen: { host: "127.0.0.1", port: 0 }, datagramSize: 1200, format: "anyperf", endOn: "zero-length", options: { recvBuffer: 4 << 20 } }]);
    const tx = await DataPlane.open([
      { kind: "udp-send", id: 0, connect: { host: "127.0.0.1", port: rx.localPorts[0]! }, datagramSize: 1200, format: "anyperf", limitPackets: 10000, rate: { packetsPerSecond: 20_000 }, endMarker: "zero-length-x3" },
    ]);
    rx.go();
    tx.go();
    await tx.ended;
    await Promise.race([rx.ended, Bun.sleep(3000)]);
    expect(rx.ends[0]?.reason).toBe("marker");
    const r = rx.snapshot().streams[0]!;
    // Loopback at 20k pkt/s into a 4 MiB buffer: the kernel drops nothing, so the count is exact.
    expect(r.packets + r.lost).toBe(10000);
    expect(r.lost).toBe(0);
    expect(r.outOfOrder).toBe(0);
    expect(r.bytes).toBe(r.packets * 1200);
  });
});
