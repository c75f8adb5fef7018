/**
 * UdpAcceptor on real loopback sockets: UDP tests take turns on the server port, hellos reach only the test whose
 * turn it is, a stream's connected socket (or without libc its view of the catching socket) takes its client's
 * datagrams away from the catching socket, and an idle acceptor leaves the port free. Ports 25160-25161, 18000.
 */
import { afterAll, expect, test } from "bun:test";
import { bunNet } from "../../src/net/bun.ts";
import { localNet } from "../../src/net/local-hand-off.ts";
import { loadSockopt } from "../../src/sockopt/sockopt.ts";
import { UdpAcceptor, type Endpoint } from "../../compat/iperf3/udp-acceptor.ts";
import { UDP_HELLO } from "../../interop/iperf3/udp.ts";

const PORT = 25160;
const sockopt = (await loadSockopt())!;
const open: Array<{ close(): void }> = [];
afterAll(() => open.forEach((s) => s.close()));

async function client(): Promise<{ port: number; send(d: Uint8Array): void; got: Uint8Array[] }> {
  const got: Uint8Array[] = [];
  const s = await Bun.udpSocket({ connect: { hostname: "127.0.0.1", port: PORT }, socket: { data: (_s, d) => void got.push(new Uint8Array(d)) } });
  open.push(s);
  return { port: s.port, send: (d) => void s.send(d), got };
}

const until = async (ok: () => boolean, ms = 2000) => {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error("timed out");
    await Bun.sleep(5);
  }
};

test.skipIf(!sockopt)("tests take turns; hellos go to the holder; a stream socket takes its client's datagrams", async () => {
  const acc = new UdpAcceptor(bunNet, sockopt, "127.0.0.1", PORT);
  const heardA: Endpoint[] = [];
  const heardB: Endpoint[] = [];
  const a = { hello: (f: Endpoint) => void heardA.push(f) };
  const b = { hello: (f: Endpoint) => void heardB.push(f) };
  let bReady = false;
  await acc.take(a);
  void acc.take(b).then(() => (bReady = true));

  const c1 = await client();
  c1.send(new TextEncoder().encode("junk")); // not a hello: opens nothing
  c1.send(UDP_HELLO);
  await until(() => heardA.length === 1);
  expect(heardA[0]).toEqual({ host: "127.0.0.1", port: c1.port });
  // c1's stream gets its own socket: its later datagrams no longer reach the acceptor.
  const { fd } = acc.streamSocket(heardA[0]!);
  const streamGot: number[] = [];
  const stream = await bunNet.udpSocket({ fd, socket: { data: (_s, d) => void streamGot.push(d.length) } });
  open.push(stream);
  c1.send(UDP_HELLO);
  c1.send(new Uint8Array(100));
  await until(() => streamGot.length === 2);
  expect(heardA.length).toBe(1);
  expect(bReady).toBe(false);
  expect(heardB).toEqual([]);

  acc.release(a);
  await until(() => bReady);
  const c2 = await client();
  c2.send(UDP_HELLO);
  await until(() => heardB.length === 1);
  expect(heardB[0]!.port).toBe(c2.port);
  expect(heardA.length).toBe(1);
  acc.release(b);
  stream.close();

  // Idle: the catching socket is closed, so a plain socket (no SO_REUSEADDR) can bind the port again.
  await Bun.sleep(20);
  const plain = await Bun.udpSocket({ hostname: "127.0.0.1", port: PORT });
  plain.close();
});

test.skipIf(!sockopt)("a holder that leaves while waiting never gets the turn; close() refuses the waiting", async () => {
  const acc = new UdpAcceptor(bunNet, sockopt, "127.0.0.1", PORT);
  const a = { hello: () => {} };
  const b = { hello: () => {} };
  const c = { hello: () => {} };
  await acc.take(a);
  let bReady = false;
  void acc.take(b).then(() => (bReady = true));
  const refused = acc.take(c).then(
    () => "ready",
    (e: Error) => e.message,
  );
  acc.release(b);
  acc.release(a);
  expect(await Promise.race([refused, Bun.sleep(200).then(() => "waiting")])).toBe("ready");
  expect(bReady).toBe(false);
  const d = acc.take({ hello: () => {} }).catch((e: Error) => e.message);
  acc.close();
  expect(await d).toBe("the server is stopping");
});

test.skipIf(!sockopt)("a port held by a socket without SO_REUSEADDR: the turn fails with EADDRINUSE", async () => {
  const holder = await Bun.udpSocket({ hostname: "127.0.0.1", port: PORT + 1 });
  try {
    const acc = new UdpAcceptor(bunNet, sockopt, "127.0.0.1", PORT + 1);
    const err = await acc.take({ hello: () => {} }).then(
      () => undefined,
      (e: { code?: string; message: string }) => e,
    );
    expect(err?.message).toMatch(/in use|EADDRINUSE/);
  } finally {
    holder.close();
  }
});

test("without libc: a stream's view takes its client's datagrams, answers from the port, and the port frees when the last view closes", async () => {
  const port = 18000;
  const net = localNet(bunNet);
  const acc = new UdpAcceptor(net, undefined, "127.0.0.1", port);
  const heard: Endpoint[] = [];
  const a = { hello: (f: Endpoint) => void heard.push(f) };
  await acc.take(a);
  const got: Uint8Array[] = [];
  const c = await Bun.udpSocket({ connect: { hostname: "127.0.0.1", port }, socket: { data: (_s, d) => void got.push(new Uint8Array(d)) } });
  open.push(c);
  c.send(UDP_HELLO);
  await until(() => heard.length === 1);
  const adopt = acc.streamSocket(heard[0]!);
  expect(adopt.local).toBe(true);
  // Sent before the stream took its view: held, then given to the stream in order.
  c.send(new Uint8Array(10));
  await Bun.sleep(20);
  const streamGot: number[] = [];
  const stream = await net.udpSocket({ fd: adopt.fd, socket: { data: (_s, d, p) => void streamGot.push(d.length, p) } });
  c.send(new Uint8Array(20));
  await until(() => streamGot.length === 4);
  expect(streamGot).toEqual([10, c.port, 20, c.port]);
  expect(heard.length).toBe(1);
  expect(stream.send(new Uint8Array([1, 2, 3]))).toBe(true);
  expect(stream.sendMany([new Uint8Array(4), c.port, "127.0.0.1"])).toBe(1);
  await until(() => got.length === 2);
  expect(got.map((d) => d.length)).toEqual([3, 4]);
  // The turn ends; the view still reads through the port until its stream closes it.
  acc.release(a);
  c.send(new Uint8Array(30));
  await until(() => streamGot.length === 6);
  stream.close();
  await Bun.sleep(20);
  const plain = await Bun.udpSocket({ hostname: "127.0.0.1", port });
  plain.close();
});
