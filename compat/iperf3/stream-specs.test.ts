import { expect, test } from "bun:test";
import { StreamSpec } from "../../src/stream-spec.ts";
import { TestParams } from "../../interop/iperf3/params.ts";
import { UDP_REPLY } from "../../interop/iperf3/udp.ts";
import { adoptedTcpSpec, clientSendBlocks, sendBlocks, senderIndex, serverSendBlocks, serverUdpRecvSpec, serverUdpSendSpec, timedSendBlocks } from "./stream-specs.ts";

const udp = (o: Partial<TestParams>) => TestParams.parse({ protocol: "udp", len: 32768, bandwidth: 100e6, timeS: 4, ...o });

test("a timed paced sender's budget is ceil(rate x (omit + time) / len) blocks, as many as 3.12 sends", () => {
  // 100 Mbit/s for 4 s in 32 KiB datagrams: 1525.88 -> 1526, the count the stock server sends in that test.
  expect(timedSendBlocks(udp({}))).toBe(1526);
  expect(timedSendBlocks(udp({ omitS: 1 }))).toBe(Math.ceil((100e6 * 5) / 8 / 32768));
  expect(timedSendBlocks(udp({ len: 8192, bandwidth: 25e6 }))).toBe(1526);
  // Exact multiples are not rounded up.
  expect(timedSendBlocks(udp({ len: 1000, bandwidth: 8000, timeS: 10 }))).toBe(10);
});

test("no budget where the test does not end on time at a known rate", () => {
  expect(timedSendBlocks(udp({ bandwidth: 0 }))).toBe(0);
  expect(timedSendBlocks(udp({ timeS: 0, bytes: 1e6 }))).toBe(0);
  expect(timedSendBlocks(udp({ timeS: 0, blocks: 100 }))).toBe(0);
  // TCP: 128 KiB writes at 800 Mbit/s for 3 s.
  expect(timedSendBlocks(TestParams.parse({ protocol: "tcp", len: 131072, bandwidth: 800e6, timeS: 3 }))).toBe(2289);
});

test("server UDP streams adopt their connected socket and greet the client with the reply", () => {
  const peer = { host: "127.0.0.1", port: 40000 };
  const recv = StreamSpec.parse(serverUdpRecvSpec({ fd: 7, local: false }, peer, { host: "::", port: 5201 }, udp({ udpCounters64bit: true })));
  expect(recv).toMatchObject({ kind: "udp-recv", adopt: { fd: 7, peer, local: false }, greeting: UDP_REPLY, format: "iperf3-64", listen: { host: "::", port: 5201 } });
  expect(recv.options.recvBuffer).toBeGreaterThan(0);
  const p = udp({ len: 1400 });
  const send = StreamSpec.parse(serverUdpSendSpec({ fd: 8, local: false }, peer, p, serverSendBlocks(p, 0)));
  expect(send).toMatchObject({ kind: "udp-send", adopt: { fd: 8, peer, local: false }, connect: peer, hello: UDP_REPLY, awaitReply: false, datagramSize: 1400, format: "iperf3" });
  expect(send.kind === "udp-send" && send.limitPackets).toBe(Math.ceil((100e6 * 4) / 8 / 1400));
});

test("--dont-fragment asks a UDP stream socket for DF (as 3.12 sets it on every UDP stream), never a TCP one", () => {
  const peer = { host: "127.0.0.1", port: 40000 };
  const p = udp({ len: 1400, dontFragment: true });
  expect(StreamSpec.parse(serverUdpSendSpec({ fd: 8, local: false }, peer, p)).options.dontFragment).toBe(true);
  expect(StreamSpec.parse(adoptedTcpSpec("send", { fd: 9, local: false }, 0, TestParams.parse({ protocol: "tcp", len: 131072, dontFragment: true }))).options.dontFragment).toBeUndefined();
});

test("a local UDP stream (a view of the port socket, no libc) asks for no socket option unless -w does", () => {
  const peer = { host: "127.0.0.1", port: 40000 };
  const local = { fd: 2 ** 30, local: true };
  expect(StreamSpec.parse(serverUdpRecvSpec(local, peer, { host: "::", port: 5201 }, udp({}))).options).toEqual({});
  expect(StreamSpec.parse(serverUdpRecvSpec(local, peer, { host: "::", port: 5201 }, udp({ window: 65536 }))).options).toEqual({ sendBuffer: 65536, recvBuffer: 65536 });
  expect(StreamSpec.parse(serverUdpSendSpec(local, peer, udp({})))).toMatchObject({ adopt: { fd: 2 ** 30, peer, local: true }, options: {} });
});

test("-n / -k: each sending stream stops on its share of the blocks, the shares add up to the target", () => {
  const tcp = (o: Partial<TestParams>) => TestParams.parse({ protocol: "tcp", len: 131072, timeS: 0, ...o });
  // 200 MiB in 128 KiB blocks: 1600 blocks, one stream.
  expect(sendBlocks(tcp({ bytes: 200 * 1024 * 1024 }), 0)).toBe(1600);
  // A partial last block is sent whole, as 3.12 does.
  expect(sendBlocks(tcp({ bytes: 131073 }), 0)).toBe(2);
  const p = tcp({ blocks: 801, parallel: 4 });
  const shares = [0, 1, 2, 3].map((i) => sendBlocks(p, i));
  expect(shares).toEqual([201, 200, 200, 200]);
  // More streams than blocks: every stream sends one (0 would mean "no limit" to the engine).
  expect([0, 1, 2].map((i) => sendBlocks(tcp({ blocks: 2, parallel: 3 }), i))).toEqual([1, 1, 1]);
  expect(sendBlocks(tcp({ timeS: 10 }), 0)).toBe(0);
  // --bidir: each direction's streams split the target among themselves.
  const bidir = tcp({ blocks: 10, parallel: 2, bidirectional: true });
  expect([0, 1, 2, 3].map((n) => sendBlocks(bidir, senderIndex(bidir, n)))).toEqual([5, 5, 5, 5]);
  // The engine's limit on a TCP sender is whole blocks in bytes; a UDP sender's is datagrams.
  const k = tcp({ blocks: 801, parallel: 4 });
  expect(StreamSpec.parse(adoptedTcpSpec("send", { fd: 9, local: false }, 0, k, clientSendBlocks(k, 1))).limitBytes).toBe(200 * 131072);
  // A server's timed sender stops on its rate budget; a client's ends on its own clock.
  const timed = tcp({ timeS: 3, bandwidth: 800e6 });
  expect(StreamSpec.parse(adoptedTcpSpec("send", { fd: 9, local: false }, 0, timed, serverSendBlocks(timed, 0))).limitBytes).toBe(2289 * 131072);
  expect(clientSendBlocks(timed, 0)).toBe(0);
  // UDP -n / -k: a server sends until TEST_END (a lost datagram must not leave the counting client waiting).
  expect(serverSendBlocks(udp({ timeS: 0, bytes: 16 * 1024 * 1024, len: 8192 }), 0)).toBe(0);
  expect(serverSendBlocks(udp({ timeS: 0, blocks: 1024 }), 0)).toBe(0);
  expect(serverSendBlocks(tcp({ bytes: 200 * 1024 * 1024 }), 0)).toBe(1600);
  expect(serverSendBlocks(udp({}), 0)).toBe(1526);
});
