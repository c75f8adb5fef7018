import { afterAll, beforeAll, expect, test } from "bun:test";
import { DataPlane } from "../../src/engine/data-plane.ts";
import { WorkerPool } from "../../src/engine/worker-pool.ts";
import { park } from "../../src/net/local-hand-off.ts";
import { handOffIsLocal, loadNet } from "../../src/net/net.ts";
import type { TcpSocket, UdpSocket } from "../../src/net/types.ts";

// The portable hand-off (Windows, macOS, musl), forced here on Linux: sockets stay on the main thread for its own host.
beforeAll(() => void (process.env.ANYPERF_LOCAL_HAND_OFF = "1"));
afterAll(() => WorkerPool.shutdown());

const COOKIE = new TextEncoder().encode("COOK");

/** A main-thread listener that, like iperf3's, reads a 4-byte cookie and hands the rest of the connection on. */
async function cookieServer(onHanded: (id: number, pending: number) => void) {
  const net = await loadNet();
  return net.listen<{ handed: boolean }>({
    hostname: "127.0.0.1",
    port: 0,
    data: { handed: false },
    socket: {
      open: (s) => void (s.data = { handed: false }),
      data(s, d) {
        if (s.data.handed) throw new Error("the front end's handler saw data after the hand-off");
        s.data.handed = true;
        onHanded(park(s as TcpSocket<unknown>), d.byteLength - COOKIE.length);
      },
    },
  });
}

test("forced by ANYPERF_LOCAL_HAND_OFF=1", async () => {
  expect(await handOffIsLocal()).toBe(true);
});

test("TCP receive: bytes that came with the cookie, meanwhile and later are all counted, EOF ends the stream", async () => {
  let plane: Promise<DataPlane> | undefined;
  const listener = await cookieServer((fd, pending) => {
    plane = DataPlane.open([{ kind: "tcp-recv", id: 0, adopt: { fd, pending, local: true }, connections: 1 }]);
  });
  const payload = new Uint8Array(4 << 20).fill(7);
  const client = await Bun.connect({ hostname: "127.0.0.1", port: listener.port, socket: { data() {}, drain(s) { flush(s); } } });
  let off = 0;
  const flush = (s: typeof client) => {
    while (off < payload.length) {
      const n = s.write(payload, off, payload.length - off);
      if (n <= 0) return;
      off += n;
    }
    s.end();
  };
  client.write(COOKIE);
  flush(client);
  while (!plane) await Bun.sleep(5);
  const p = await plane;
  await Promise.race([p.ended, Bun.sleep(10_000)]);
  expect(p.ends[0]?.reason).toBe("eof");
  expect(p.snapshot().streams[0]!.bytes).toBe(payload.length);
  listener.stop(true);
});

test("TCP_RR server on a handed-off connection answers every request", async () => {
  let plane: Promise<DataPlane> | undefined;
  const listener = await cookieServer((fd) => {
    plane = DataPlane.open([{ kind: "rr-server", id: 0, transport: "tcp", adopt: { fd, pending: 0, local: true }, requestSize: 1, responseSize: 1 }]);
  });
  let answers = 0;
  const client = await Bun.connect({ hostname: "127.0.0.1", port: listener.port, socket: { data: (s, d) => { answers += d.byteLength; if (answers < 1000) s.write(new Uint8Array(1)); } } });
  client.write(COOKIE);
  while (!plane) await Bun.sleep(5);
  const p = await plane;
  client.write(new Uint8Array(1));
  for (let i = 0; i < 200 && answers < 1000; i++) await Bun.sleep(10);
  expect(answers).toBe(1000);
  expect(p.snapshot().streams[0]!.transactions).toBe(1000);
  client.end();
  await p.stop();
  listener.stop(true);
});

test("UDP receive on a handed-off socket: datagrams that arrived before the stream took it are counted", async () => {
  const net = await loadNet();
  const strays: number[] = [];
  const server = await net.udpSocket({ hostname: "127.0.0.1", port: 0, socket: { data: (_s, d) => void strays.push(d.byteLength) } });
  const client = await Bun.udpSocket({ connect: { hostname: "127.0.0.1", port: server.port }, socket: { data() {} } });
  client.send(new Uint8Array(3));
  await Bun.sleep(50);
  const fd = park(server as UdpSocket);
  for (let i = 0; i < 10; i++) client.send(new Uint8Array(100));
  await Bun.sleep(50);
  const plane = await DataPlane.open([{ kind: "udp-recv", id: 0, listen: { host: "127.0.0.1", port: server.port }, format: "none", adopt: { fd, peer: { host: "127.0.0.1", port: client.port }, local: true } }]);
  for (let i = 0; i < 10; i++) client.send(new Uint8Array(100));
  await Bun.sleep(200);
  expect(strays).toEqual([3]);
  expect(plane.snapshot().streams[0]!.packets).toBe(20);
  await plane.stop();
  client.close();
});
