import { afterAll, expect, test } from "bun:test";
import { DataPlane } from "../../src/engine/data-plane.ts";
import { WorkerPool } from "../../src/engine/worker-pool.ts";
import { loadSockopt } from "../../src/sockopt/sockopt.ts";
import { bunNet } from "../../src/net/bun.ts";

afterAll(() => WorkerPool.shutdown());

test("UDP flows sharing one server port are counted apart by adopted connected sockets", async () => {
  const sockopt = (await loadSockopt())!;
  const listenerFd = sockopt.sharedUdpSocket({ host: "127.0.0.1", port: 0 });
  const port = sockopt.localAddress(listenerFd)!.port;
  const strays: string[] = [];
  const listener = await bunNet.udpSocket({ fd: listenerFd, socket: { data: (_s, d) => void strays.push(new TextDecoder().decode(d)) } });
  const greetings: string[] = [];
  const clients = await Promise.all(
    [0, 1].map(() => Bun.udpSocket({ connect: { hostname: "127.0.0.1", port }, socket: { data: (_s, d) => void greetings.push(d.toString()) } })),
  );
  const plane = await DataPlane.open(
    clients.map((c, i) => {
      const peer = { host: "127.0.0.1", port: c.port };
      return { kind: "udp-recv" as const, id: i, listen: { host: "127.0.0.1", port }, format: "none" as const, adopt: { fd: sockopt.sharedUdpSocket({ host: "127.0.0.1", port }, peer), peer }, greeting: new TextEncoder().encode("6789") };
    }),
  );
  const stranger = await Bun.udpSocket({ connect: { hostname: "127.0.0.1", port }, socket: { data() {} } });
  for (let i = 0; i < 100; i++) clients[0]!.send(new Uint8Array(10));
  for (let i = 0; i < 40; i++) clients[1]!.send(new Uint8Array(20));
  stranger.send(new TextEncoder().encode("hello"));
  await Bun.sleep(500);
  const s = plane.snapshot().streams;
  expect([s[0]!.packets, s[0]!.bytes]).toEqual([100, 1000]);
  expect([s[1]!.packets, s[1]!.bytes]).toEqual([40, 800]);
  expect(greetings).toEqual(["6789", "6789"]);
  expect(strays).toEqual(["hello"]);
  await plane.stop();
  for (const c of [...clients, stranger, listener]) c.close();
});

test("a UDP sender on an adopted socket sends from the shared server port to its peer", async () => {
  const sockopt = (await loadSockopt())!;
  let got = 0;
  let from = 0;
  const client = await Bun.udpSocket({ hostname: "127.0.0.1", port: 0, socket: { data: (_s, _d, p) => { got++; from = p; } } });
  const serverPort = 24790;
  const peer = { host: "127.0.0.1", port: client.port };
  const plane = await DataPlane.open([
    { kind: "udp-send", id: 0, connect: peer, adopt: { fd: sockopt.sharedUdpSocket({ host: "127.0.0.1", port: serverPort }, peer), peer }, datagramSize: 100, format: "iperf3", limitPackets: 500, rate: { bitsPerSecond: 8e6 } },
  ]);
  plane.go();
  await plane.ended;
  await Bun.sleep(100);
  expect(plane.snapshot().streams[0]!.packets).toBe(500);
  expect(got).toBe(500);
  expect(from).toBe(serverPort);
  client.close();
});
