import { z } from "zod";
import { PING_BYTES } from "./worker/udp-pings.ts";
import { Cidr } from "./access/cidr-schema.ts";

/**
 * What one Worker-owned data stream does. Every front end (native, iperf3, iperf, netperf, ntttcp) describes its data
 * plane with these; the worker knows no dialect, only these shapes. A "stream" is the unit that owns one counter
 * slot: a sender thread with `connections` sockets, a listener that accepts any number of connections, or one
 * adopted socket.
 */

/** The largest single read or write a stream makes: a dialect refuses a bigger buffer by its own flag. */
export const MAX_IO_BYTES = 64 * 1024 * 1024;
/** The largest UDP payload over IPv4 (65535 − 20 − 8). */
export const MAX_DATAGRAM_BYTES = 65507;

export const Endpoint = z.object({
  host: z.string().min(1),
  port: z.number().int().min(0).max(65535),
});
export type Endpoint = z.infer<typeof Endpoint>;

export const SocketOptions = z.object({
  sendBuffer: z.number().int().positive().optional(),
  recvBuffer: z.number().int().positive().optional(),
  noDelay: z.boolean().optional(),
  /** SO_KEEPALIVE with the kernel's idle time, interval and count. */
  keepAlive: z.boolean().optional(),
  /** TCP_CORK: only full segments leave until the socket is closed (or uncorked). */
  cork: z.boolean().optional(),
  /** TCP_QUICKACK: not sticky in the kernel, so it is applied again after each read it should cover. */
  quickAck: z.boolean().optional(),
  /** TCP_NOTSENT_LOWAT: the socket takes more only while fewer unsent bytes than this wait in it. */
  notSentLowat: z.number().int().min(1).max(0x7fffffff).optional(),
  congestion: z.string().min(1).max(15).optional(),
  mss: z.number().int().min(88).max(65535).optional(),
  /** Full TOS byte (DSCP << 2 | ECN). */
  tos: z.number().int().min(0).max(255).optional(),
  /** SO_MAX_PACING_RATE in bytes/s. */
  pacingRate: z.number().int().positive().optional(),
  /** Don't Fragment on an IPv4 socket (IP_MTU_DISCOVER = IP_PMTUDISC_DO); an IPv6 one never fragments in the path. */
  dontFragment: z.boolean().optional(),
});
export type SocketOptions = z.infer<typeof SocketOptions>;

/** Target rate; 0 or absent means as fast as possible. */
export const Rate = z.object({
  bitsPerSecond: z.number().nonnegative().optional(),
  packetsPerSecond: z.number().nonnegative().optional(),
});
export type Rate = z.infer<typeof Rate>;

/** How a datagram is stamped and read; the layouts live in src/worker/datagram-formats.ts. */
export const DatagramFormat = z.enum(["none", "anyperf", "iperf3", "iperf3-64", "iperf2"]);
export type DatagramFormat = z.infer<typeof DatagramFormat>;

/** How a TCP sender ends: FIN and wait for the peer's EOF (netperf, iperf 2), or just close. */
export const TcpEnd = z.enum(["close", "fin-wait-eof"]);

const base = {
  id: z.number().int().nonnegative(),
  options: SocketOptions.default({}),
  /**
   * Stop by itself after this many payload bytes (sender), transactions (RR), datagrams (UDP) or receive calls
   * (tcp-recv, each of at most readSize bytes); 0 = until told to stop.
   */
  limitBytes: z.number().nonnegative().default(0),
  limitTransactions: z.number().nonnegative().default(0),
  limitPackets: z.number().nonnegative().default(0),
  /** Stop after this much idle time with no byte moved, once started (bad peers never wedge us). 0 = none. */
  idleTimeoutMs: z.number().nonnegative().default(0),
  family: z.enum(["any", "ipv4", "ipv6"]).default("any"),
  /** Peers a listening stream accepts (connections, datagrams); others are dropped and logged. Unset = anyone. */
  allow: z.array(Cidr).min(1).optional(),
  /** Run this stream on a Worker pinned to this CPU (ntttcp -m mappings, bench placement); unset = any Worker. */
  cpu: z.number().int().min(0).max(1023).optional(),
};

/**
 * A socket the main thread accepted or connected, handed to the stream: a dup()ed fd the stream's Worker adopts, or
 * with `local` a socket that stays on the main thread (parked in src/net/local-hand-off.ts under that number) for
 * the main thread's own stream host, where sockets cannot cross threads. `pending` bytes of payload were already
 * read on the main thread.
 */
const TcpAdopt = z.object({ fd: z.number().int().nonnegative(), pending: z.number().int().nonnegative().default(0), local: z.boolean().default(false) });

/** Where the socket comes from: we connect, we listen, or the main thread hands us an accepted socket. */
const tcpSource = {
  connect: Endpoint.optional(),
  /** Local address/port to bind before connecting (iperf2 -B, ntttcp -f, netperf -P). */
  bind: Endpoint.optional(),
  listen: Endpoint.optional(),
  adopt: TcpAdopt.optional(),
  /** Sockets this stream opens (connect) or accepts before it stops listening (listen; 0 = any number). */
  connections: z.number().int().min(0).max(100000).default(1),
};

/**
 * What a sender stamps into each payload as its first byte goes out (iperf 2 --trip-times over TCP,
 * docs/protocols/iperf2.md §2.7), all big-endian: the wall clock (u32 seconds, u32 microseconds) at `stampAt`, the
 * payload's number from 1 (u32) at `idAt`, and at `seqAt` `seqBase` plus the payload bytes so far, this one's
 * included (u32 lower, u32 upper).
 */
export const StampedWrites = z.object({
  stampAt: z.number().int().min(0).max(4088),
  idAt: z.number().int().min(0).max(4092),
  seqAt: z.number().int().min(0).max(4088),
  seqBase: z.number().int().min(0),
  /** With frames: where each frame's size goes (u32); the id is then the frame's, the sequence advances by its size. */
  sizeAt: z.number().int().min(0).max(4092).optional(),
});
export type StampedWrites = z.infer<typeof StampedWrites>;

/**
 * An isochronous sender's frames (iperf 2 --isochronous, src/worker/frames.ts): `perSecond` frames, each of a size
 * drawn around `meanBps` / `perSecond` / 8 bytes (log-normal with `stddevBps`), none shorter than `minBytes` (the
 * header it carries).
 */
export const Frames = z.object({
  perSecond: z.number().positive().max(100_000),
  meanBps: z.number().positive().max(1e13),
  stddevBps: z.number().min(0).max(1e13).default(0),
  minBytes: z.number().int().min(1).max(MAX_IO_BYTES),
  /** A timed test's length: frames past it are not sent (the stream waits for its stop). */
  seconds: z.number().positive().optional(),
});
export type Frames = z.infer<typeof Frames>;

export const TcpSendSpec = z.object({
  kind: z.literal("tcp-send"),
  ...base,
  ...tcpSource,
  /** Bytes written once on each new connection before the payload (cookies, headers); not counted. */
  preamble: z.instanceof(Uint8Array).optional(),
  /** Payload written repeatedly; its length is the write size. Filled with `fill` when absent. */
  payload: z.instanceof(Uint8Array).optional(),
  writeSize: z.number().int().min(1).max(MAX_IO_BYTES).default(128 * 1024),
  fill: z.number().int().min(0).max(255).default(0x41),
  rate: Rate.default({}),
  end: TcpEnd.default("close"),
  /**
   * Also read the socket and count what arrives (counters' `received`): one socket that both sends and receives
   * (iperf 2 --full-duplex). Two runners on dups of one fd would split the incoming bytes between them. The peer's
   * EOF then ends the stream (our side is closed at once, as Bun does for any socket).
   */
  countReceived: z.boolean().default(false),
  /** Time each whole write of `writeSize` (first byte to last) into the latency figures, as netperf times send(). */
  timeCalls: z.boolean().default(false),
  /** Stamp each payload as it starts (one connection: the payload buffer is the stream's). */
  stampWrites: StampedWrites.optional(),
  /**
   * Frames instead of a rate: each frame written at its slot as writes of at most `writeSize`, the first stamped
   * (stampWrites, with the frame's id and size) and the others the same buffer again, as iperf 2 writes them.
   */
  frames: Frames.optional(),
  /**
   * With frames: the first frame's first `bytes`, stamped at `wallUs` and written by the thread that accepted the
   * socket before handing it over (src/engine/frame-head.ts), for a peer that times its first read from its request.
   * They count as sent; the frame clock starts at `wallUs`, and the stream writes that frame's rest.
   */
  frameHead: z.object({ bytes: z.number().int().min(1), frameSize: z.number().int().min(1), wallUs: z.number().positive() }).optional(),
})
  .refine((s) => !s.stampWrites || (s.connections === 1 && s.stampWrites.seqAt + 8 <= (s.payload?.byteLength ?? s.writeSize)), "stamped writes need one connection and a payload that holds the header")
  .refine((s) => !s.frameHead || (s.frames !== undefined && s.frameHead.bytes <= Math.min(s.frameHead.frameSize, s.payload?.byteLength ?? s.writeSize)), "a frame head needs frames, and lies within the first frame's first write");


/**
 * The sender frames its bytes in bursts, each opening with a header that holds the burst's whole size (header
 * included, u32 big-endian at `sizeAt`) and its send time on the sender's wall clock (u32 seconds, u32 microseconds,
 * big-endian, at `stampAt`); iperf 2 --trip-times writes them (docs/protocols/iperf2.md §2.7). The receiver times each
 * burst from that stamp to the read that brings its last byte: a one-way latency, meaningful with synced clocks.
 */
export const StampedBursts = z.object({
  headerBytes: z.number().int().min(8).max(4096),
  sizeAt: z.number().int().min(0).max(4092),
  stampAt: z.number().int().min(0).max(4088),
  /** The stream's first bytes, read on the main thread before the hand-off (adopt.pending counts them). */
  lead: z.instanceof(Uint8Array).default(new Uint8Array(0)),
}).refine((b) => b.sizeAt + 4 <= b.headerBytes && b.stampAt + 8 <= b.headerBytes, "the size and the stamp must lie inside the header");
export type StampedBursts = z.infer<typeof StampedBursts>;

export const TcpRecvSpec = z.object({
  kind: z.literal("tcp-recv"),
  ...base,
  ...tcpSource,
  readSize: z.number().int().min(1).max(MAX_IO_BYTES).default(128 * 1024),
  /** The stream finishes when all its connections saw EOF (else only when told to stop). */
  endOnEof: z.boolean().default(true),
  /** Time each read (from the end of the one before) into the latency figures, as netperf times recv(). */
  timeCalls: z.boolean().default(false),
  /** Time each of the sender's stamped bursts into the latency figures instead (one connection). */
  bursts: StampedBursts.optional(),
  /**
   * Its sender is a stream of this process (anyperf loopback): a lagging Worker does not raise its share of the CPU
   * for it, which would only take that CPU from the sender (src/worker/poll-group.ts, LAG_NICE).
   */
  senderHere: z.boolean().default(false),
});

/** A bound (and usually connected) UDP socket made on the main thread (Sockopt.sharedUdpSocket), and its peer; `local` as for TCP. */
const UdpAdopt = z.object({ fd: z.number().int().nonnegative(), peer: Endpoint, local: z.boolean().default(false) });

export const UdpSendSpec = z.object({
  kind: z.literal("udp-send"),
  ...base,
  /** The receiver; with `adopt` the peer of the adopted socket. */
  connect: Endpoint,
  adopt: UdpAdopt.optional(),
  bind: Endpoint.optional(),
  datagramSize: z.number().int().min(0).max(MAX_DATAGRAM_BYTES).default(1400),
  format: DatagramFormat.default("anyperf"),
  /** Template every datagram starts from (iperf 2 repeats its client header); the stamp overwrites its header. */
  payload: z.instanceof(Uint8Array).optional(),
  rate: Rate.default({}),
  fill: z.number().int().min(0).max(255).default(0x42),
  /** Datagrams sent once before the payload, in order, and the reply to wait for before starting (iperf3). */
  hello: z.instanceof(Uint8Array).optional(),
  awaitReply: z.boolean().default(false),
  /**
   * End markers: netperf sends three zero-length datagrams; iperf 2 sends a negative-seq FIN until a report, or
   * once without waiting for one (its --no-udp-fin: the receiver still needs the FIN to end its flow).
   */
  endMarker: z.enum(["none", "zero-length-x3", "iperf2-fin", "iperf2-fin-once", "anyperf-fin"]).default("none"),
  batch: z.number().int().min(1).max(1024).default(64),
  /**
   * With limitBytes, the last datagram carries only what is left of the amount (iperf 2: `-n 100K` of 1470-byte
   * datagrams ends on one of 970), not a whole one (iperf3).
   */
  trimLast: z.boolean().default(false),
  /**
   * Frames instead of a rate (iperf 2 --isochronous, src/worker/frames.ts): each datagram `gapUs` after the one
   * before (0: back to back), the iperf 2 frame fields written at `fieldsAt`.
   */
  frames: Frames.extend({
    gapUs: z.number().min(0).max(1e6).default(0),
    fieldsAt: z.number().int().min(0).max(MAX_DATAGRAM_BYTES - 28),
  }).optional(),
  /**
   * Time sends into the latency figures, as netperf times each sendto(): a batch of n datagrams counts as n calls
   * of 1/n of the time since the batch before (one sendmmsg gives no finer clock).
   */
  timeCalls: z.boolean().default(false),
});

export const UdpRecvSpec = z.object({
  kind: z.literal("udp-recv"),
  ...base,
  listen: Endpoint,
  /** Receive on an adopted socket (iperf3's per-stream sockets sharing the server port) instead of binding `listen`. */
  adopt: UdpAdopt.optional(),
  /** Sent once to the adopted socket's peer when the stream opens (iperf3's reply to the client's hello). */
  greeting: z.instanceof(Uint8Array).optional(),
  datagramSize: z.number().int().min(1).max(65535).default(65535),
  format: DatagramFormat.default("anyperf"),
  /** Reply to the first datagram with these bytes and connect to its source (iperf3's UDP handshake). */
  helloReply: z.instanceof(Uint8Array).optional(),
  /**
   * The first datagram is the peer's answer to a hello this stream's owner sent (iperf3's client receiving): it
   * marks the stream connected and is not counted, so the streams count from their open like TCP ones. Counting
   * from a later cut instead lost every datagram a loaded receiver read before it processed TEST_START.
   */
  firstIsReply: z.boolean().default(false),
  /** What ends the stream besides "stop": a zero-length datagram (netperf) or a FIN seq (anyperf, iperf 2). */
  endOn: z.enum(["stop", "zero-length", "fin"]).default("stop"),
  /** Each stamped datagram's one-way transit (sender's stamp to arrival) is a timed event: iperf 2's -e latency. */
  timeTransit: z.boolean().default(false),
});

export const RrClientSpec = z.object({
  kind: z.literal("rr-client"),
  ...base,
  transport: z.enum(["tcp", "udp"]),
  connect: Endpoint,
  bind: Endpoint.optional(),
  /** 0 and 0 with perTransactionConnect: a transaction is a connect and the server's close (netperf TCP_CC). */
  requestSize: z.number().int().min(0).max(1 << 20).default(1),
  responseSize: z.number().int().min(0).max(1 << 20).default(1),
  /** Open a new TCP connection for every transaction (TCP_CRR). */
  perTransactionConnect: z.boolean().default(false),
  /** Transactions kept in flight (netperf -b burst + 1). */
  inFlight: z.number().int().min(1).max(1024).default(1),
  endMarker: z.enum(["none", "zero-length-x3"]).default("none"),
  /**
   * Start a transaction at most every gapMs (0 = back to back): a latency probe's samples then spread evenly over time,
   * where a closed loop takes thousands while a queue is empty and a few while it is full. Over UDP, a timestamped ping
   * every gapMs (udp-pings.ts), whether or not the last one was answered.
   */
  gapMs: z.number().min(0).max(60_000).default(0),
}).refine((s) => s.gapMs === 0 || (s.transport === "tcp" ? !s.perTransactionConnect && s.inFlight === 1 : s.requestSize >= PING_BYTES && s.responseSize >= PING_BYTES), {
  message: `a transaction gap paces one TCP transaction at a time on one connection, or UDP pings of ${PING_BYTES} bytes or more: drop it for CRR or several in flight`,
}).refine((s) => (s.requestSize > 0 && s.responseSize > 0) || (s.perTransactionConnect && s.transport === "tcp" && s.requestSize === 0 && s.responseSize === 0), {
  message: "an empty request or response is only a TCP connect-and-close client's (both sizes 0)",
});

export const RrServerSpec = z.object({
  kind: z.literal("rr-server"),
  ...base,
  transport: z.enum(["tcp", "udp"]),
  listen: Endpoint.optional(),
  adopt: TcpAdopt.optional(),
  /** 0 and 0 with closeAfterResponse: each connection is closed as soon as it is accepted (netperf TCP_CC). */
  requestSize: z.number().int().min(0).max(1 << 20).default(1),
  responseSize: z.number().int().min(0).max(1 << 20).default(1),
  /** Close each connection after one response (TCP_CRR server side). */
  closeAfterResponse: z.boolean().default(false),
  /** UDP: each response starts with its request's bytes (a timestamped ping's stamp goes back; udp-pings.ts). */
  echo: z.boolean().default(false),
  connections: z.number().int().min(0).max(100000).default(0),
}).refine((s) => (s.requestSize > 0 && s.responseSize > 0) || (s.closeAfterResponse && s.transport === "tcp" && s.requestSize === 0 && s.responseSize === 0), {
  message: "an empty request or response is only a TCP connect-and-close server's (both sizes 0)",
});

export const StreamSpec = z.discriminatedUnion("kind", [TcpSendSpec, TcpRecvSpec, UdpSendSpec, UdpRecvSpec, RrClientSpec, RrServerSpec]);
export type StreamSpec = z.infer<typeof StreamSpec>;
export type StreamSpecInput = z.input<typeof StreamSpec>;
export type TcpSendSpec = z.infer<typeof TcpSendSpec>;
export type TcpRecvSpec = z.infer<typeof TcpRecvSpec>;
export type UdpSendSpec = z.infer<typeof UdpSendSpec>;
export type UdpSendSpecInput = z.input<typeof UdpSendSpec>;
export type TcpSendSpecInput = z.input<typeof TcpSendSpec>;
export type UdpRecvSpec = z.infer<typeof UdpRecvSpec>;
export type RrClientSpec = z.infer<typeof RrClientSpec>;
export type RrServerSpec = z.infer<typeof RrServerSpec>;
