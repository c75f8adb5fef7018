/**
 * iperf3 data streams as engine StreamSpecs: what each side runs on each stream, from the agreed TestParams.
 * One plane per stream, so a server can start them as their connections arrive and a client can do the UDP
 * handshakes one at a time, as the stock peers do.
 */
import { readFileSync } from "node:fs";
import type { SocketOptions, StreamSpecInput } from "../../src/stream-spec.ts";
import type { TestParams } from "../../interop/iperf3/params.ts";
import type { Adopt } from "../../src/net/hand-off.ts";
import { UDP_HELLO, UDP_REPLY } from "../../interop/iperf3/udp.ts";

/** The receive buffer iperf3 reads with on TCP (its block size), never below 128 KiB so reads stay cheap. */
const MIN_READ = 128 * 1024;

/**
 * Options every data socket gets; MSS only where the socket is ours before connect (client side). -C is set on the
 * main thread where each socket is connected or accepted (FdTools.setCongestion), so its failure reaches the peer.
 */
export function socketOptions(p: TestParams, preConnect: boolean): SocketOptions {
  const o: SocketOptions = {};
  if (p.window) {
    o.sendBuffer = p.window;
    o.recvBuffer = p.window;
  }
  if (p.protocol === "tcp") {
    if (p.noDelay) o.noDelay = true;
    if (p.mss && preConnect) o.mss = p.mss;
  }
  if (p.tos) o.tos = p.tos;
  // --fq-rate is bits/s; SO_MAX_PACING_RATE takes bytes/s.
  if (p.fqRate) o.pacingRate = Math.max(1, Math.floor(p.fqRate / 8));
  // As 3.12 on every UDP stream socket, whichever end: the sender's datagrams then carry DF.
  if (p.dontFragment && p.protocol === "udp") o.dontFragment = true;
  return o;
}

/** iperf3's --repeating-payload pattern; otherwise the engine's fill byte (the peer never checks the payload). */
export function payload(p: TestParams): Uint8Array<ArrayBuffer> | undefined {
  if (!p.repeatingPayload) return undefined;
  const out = new Uint8Array(p.len);
  for (let i = 0; i < out.length; i++) out[i] = 0x30 + (i % 10);
  return out;
}

/**
 * -A: 3.12 pins its one process to the CPU; here the data streams run on a Worker pinned there (and the client
 * pins its main thread). A server pins the test's streams to the client's ",m" (server_affinity).
 */
export function onCpu(spec: StreamSpecInput, cpu: number | undefined): StreamSpecInput {
  return cpu === undefined ? spec : { ...spec, cpu };
}

const rate = (p: TestParams) => (p.bandwidth > 0 ? { bitsPerSecond: p.bandwidth } : {});

/**
 * Blocks the `i`-th of a side's sending streams sends in a -n / -k test (0 = the test ends on time). 3.12 stops
 * its senders once the side's total reaches the target; here each stream stops on its even share, in whole
 * blocks, so the total is the target too. Every stream sends at least one block (0 would mean "no limit").
 */
export function sendBlocks(p: TestParams, i: number): number {
  const total = p.blocks > 0 ? p.blocks : p.bytes > 0 ? Math.ceil(p.bytes / p.len) : 0;
  if (total === 0) return 0;
  return Math.max(1, Math.floor(total / p.parallel) + (i < total % p.parallel ? 1 : 0));
}

/** Index of stream `n` (creation order) among the streams of its direction: --bidir's second half counts from 0. */
export function senderIndex(p: TestParams, n: number): number {
  return p.bidirectional ? n % p.parallel : n;
}

/**
 * Blocks the `n`-th stream (creation order) of a server sends in all, 0 = until stopped: its -n / -k share, or for
 * a timed test what its rate allows (see timedSendBlocks). UDP -n / -k: until the client's TEST_END, as 3.12's
 * server does. The client ends when it has *received* its count, so a server that stopped on exactly the count
 * would leave a client that lost one datagram waiting for ever.
 */
export function serverSendBlocks(p: TestParams, n: number): number {
  if (p.protocol === "udp" && (p.bytes > 0 || p.blocks > 0)) return 0;
  return sendBlocks(p, senderIndex(p, n)) || timedSendBlocks(p);
}

/** The client's streams stop on their -n / -k share; timed tests end on the client's own clock. */
export function clientSendBlocks(p: TestParams, n: number): number {
  return sendBlocks(p, senderIndex(p, n));
}

/** A TCP data connection accepted or connected on the main thread, handed to a Worker; a sender stops after `limitBlocks` (0 = never). */
export function adoptedTcpSpec(role: "send" | "recv", { fd, local }: Adopt, pending: number, p: TestParams, limitBlocks = 0): StreamSpecInput {
  const options = socketOptions(p, false);
  if (role === "send") {
    const limitBytes = limitBlocks * p.len;
    return { kind: "tcp-send", id: 0, adopt: { fd, pending: 0, local }, writeSize: p.len, payload: payload(p), rate: rate(p), limitBytes, options };
  }
  return { kind: "tcp-recv", id: 0, adopt: { fd, pending, local }, readSize: Math.max(p.len, MIN_READ), endOnEof: true, options };
}

/**
 * Datagrams per sendmmsg batch: bursts of at most ~64 KiB, so big datagrams at a modest rate do not arrive in
 * clumps that overflow the receiver's buffer (3.12 sends one datagram per pacing check).
 */
export function udpBatch(p: TestParams): number {
  return Math.max(1, Math.min(64, Math.floor(65536 / p.len)));
}

/** UDP receivers get a larger buffer unless -w says otherwise: a Worker's read loop has more jitter than C's. */
export function udpRecvOptions(p: TestParams): SocketOptions {
  const o = socketOptions(p, false);
  if (!p.window) o.recvBuffer = udpRecvBuffer();
  return o;
}

let rmemMax: number | undefined;
function udpRecvBuffer(): number {
  if (rmemMax === undefined) {
    try {
      rmemMax = Number(readFileSync("/proc/sys/net/core/rmem_max", "latin1").trim()) || 212992;
    } catch {
      rmemMax = 212992;
    }
  }
  return Math.min(4 * 1024 * 1024, rmemMax);
}

export function udpFormat(p: TestParams): "iperf3" | "iperf3-64" {
  return p.udpCounters64bit ? "iperf3-64" : "iperf3";
}

/** Client sending UDP: connect to the server port, say hello, wait for the reply, then send paced datagrams. */
export function clientUdpSendSpec(host: string, port: number, bindPort: number | undefined, p: TestParams, limitPackets = 0): StreamSpecInput {
  return {
    kind: "udp-send",
    id: 0,
    limitPackets,
    connect: { host, port },
    bind: bindPort ? { host: host.includes(":") ? "::" : "0.0.0.0", port: bindPort } : undefined,
    datagramSize: p.len,
    format: udpFormat(p),
    rate: rate(p),
    hello: UDP_HELLO,
    awaitReply: true,
    batch: udpBatch(p),
    payload: payload(p),
    options: socketOptions(p, false),
  };
}

/**
 * Client receiving UDP (-R, --bidir): an unconnected socket on an ephemeral port; the glue sends the hello from it
 * (DataPlane.send) and the server's reply, its first datagram, marks the stream connected and is not counted.
 */
export function clientUdpRecvSpec(family: "ipv4" | "ipv6", bindPort: number | undefined, p: TestParams): StreamSpecInput {
  return {
    kind: "udp-recv",
    id: 0,
    listen: { host: family === "ipv6" ? "::" : "0.0.0.0", port: bindPort ?? 0 },
    format: udpFormat(p),
    datagramSize: 65535,
    firstIsReply: true,
    options: udpRecvOptions(p),
  };
}

/**
 * Server receiving UDP: the stream's own socket on the server port, connected to the client (made on the main
 * thread when the hello came in); the Worker answers the hello from it. A local one (UdpAcceptor's view of the port
 * socket, no libc) takes no socket options: the larger buffer only where one can be set, -w is refused as on TCP.
 */
export function serverUdpRecvSpec({ fd, local }: Adopt, peer: { host: string; port: number }, listen: { host: string; port: number }, p: TestParams): StreamSpecInput {
  return {
    kind: "udp-recv",
    id: 0,
    listen,
    adopt: { fd, peer, local },
    greeting: UDP_REPLY,
    format: udpFormat(p),
    datagramSize: 65535,
    options: local ? socketOptions(p, false) : udpRecvOptions(p),
  };
}

/**
 * Blocks (TCP writes, UDP datagrams) a timed test's paced sender sends in all, 0 = no cap: what its rate allows
 * over omit + time. 3.12 sends whenever its average is below the rate, so it ends on ceil(). A server's sender
 * stops there, and at the end on its own clock (which starts before the client's): what a sender of ours writes
 * while the client's TEST_END is on its way, the client, done counting, never reads.
 */
export function timedSendBlocks(p: TestParams): number {
  if (p.timeS <= 0 || p.bytes > 0 || p.blocks > 0 || p.bandwidth <= 0) return 0;
  return Math.ceil((p.bandwidth * (p.timeS + p.omitS)) / 8 / p.len);
}

/** Server sending UDP (-R, --bidir): the stream's own socket on the server port; the reply goes out first. */
export function serverUdpSendSpec({ fd, local }: Adopt, peer: { host: string; port: number }, p: TestParams, limitPackets = 0): StreamSpecInput {
  return {
    kind: "udp-send",
    id: 0,
    connect: peer,
    adopt: { fd, peer, local },
    hello: UDP_REPLY,
    awaitReply: false,
    limitPackets,
    datagramSize: p.len,
    format: udpFormat(p),
    rate: rate(p),
    batch: udpBatch(p),
    payload: payload(p),
    options: socketOptions(p, false),
  };
}
