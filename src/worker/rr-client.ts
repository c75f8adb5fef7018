import { Slot } from "../counters.ts";
import type { RrClientSpec } from "../stream-spec.ts";
import type { TcpSocket, UdpSocket } from "../net/types.ts";
import { nowMs, openFds, type Runner, type StreamContext } from "./context.ts";
import { connectTcp, applyOptions, halfClose, type WorkerEnv } from "./sockets.ts";
import { BlockingSocket, SLICE_MS, WAIT_MS, yieldThen, type ReadResult, type UntilResult } from "./blocking-socket.ts";
import { encodeSockaddr, familyOf, type SocketFamily } from "../sockopt/sockaddr.ts";
import type { BlockingIo } from "../sockopt/blocking-io.ts";
import { LOOP_OUT, LoopEnd, readResultOf, type RrLoops } from "../sockopt/rr-loops.ts";
import { AF_INET, AF_INET6 } from "../sockopt/constants.ts";
import { PingBook, readPing, writePing } from "./udp-pings.ts";

interface Conn {
  got: number; // response bytes received for the oldest transaction in flight
  sentAt: number[]; // send times of transactions in flight, oldest first
  closed: boolean;
  /** Handed over to a BlockingSocket: the Bun socket's close is not the peer's. */
  detached?: boolean;
}

/**
 * Writes the whole request; false when the connection broke first. Requests are tiny: a partial write means a full
 * socket buffer with a transaction in flight, so it is simply tried again.
 */
function writeAll(w: { write(buf: Uint8Array, offset: number, length: number): number }, req: Uint8Array): boolean {
  for (let off = 0; off < req.byteLength; ) {
    const n = w.write(req, off, req.byteLength - off);
    if (n < 0) return false;
    off += n;
  }
  return true;
}

/** What sends requests: a Bun socket, or the same connection in blocking mode. */
type Wire = Pick<TcpSocket<Conn>, "data" | "write" | "fd">;

/** TCP_CRR's bound on connect and every wait of a transaction in blocking mode. */
const CRR_WAIT_MS = WAIT_MS * 50;
/** The same as a struct timeval, for rr-loops.c. */
const CRR_BOUNDS = new BigInt64Array([BigInt(Math.floor(CRR_WAIT_MS / 1000)), BigInt((CRR_WAIT_MS % 1000) * 1000)]);

/** A lost UDP request or response would stall the loop forever; after this long the transaction counts as lost. */
const UDP_LOSS_TIMEOUT_MS = 500;

/**
 * Request/response client: one connection (or one connected UDP socket) with `inFlight` transactions outstanding,
 * or with `perTransactionConnect` a new TCP connection per transaction (CRR: connect, request, response, close).
 * Every transaction's latency goes into the stream's histogram.
 */
export class RrClient implements Runner {
  private running = false;
  private tcp: TcpSocket<Conn> | undefined;
  private udp: UdpSocket | undefined;
  private readonly req: Uint8Array;
  private udpTimer: ReturnType<typeof setTimeout> | undefined;
  /** The next paced transaction's start (gapMs). */
  private gapTimer: ReturnType<typeof setTimeout> | undefined;
  private crrOpen: TcpSocket<Conn> | undefined;
  private stopped: (() => void) | undefined;
  private udpPending: number[] = [];
  /** UDP with a gap: timestamped pings on a clock (udp-pings.ts), the replies matched by their stamp. */
  private pings: { book: PingBook; seq: number; timer?: ReturnType<typeof setInterval> } | undefined;
  private blocking: BlockingSocket<Conn> | undefined;
  private crrBlocking: { io: BlockingIo; family: SocketFamily; sockaddr: Uint8Array } | undefined;
  private readBuf: Uint8Array | undefined;
  /** rr-loops.c's results of one call, and its clock minus ours (µs). */
  private readonly loopOut = new Float64Array(LOOP_OUT);
  private loopClockOffsetUs: number | undefined;

  constructor(private readonly spec: RrClientSpec, private readonly ctx: StreamContext, private readonly env: WorkerEnv) {
    this.req = new Uint8Array(spec.requestSize).fill(0x6e);
    if (spec.transport === "udp" && spec.gapMs > 0) this.pings = { book: new PingBook(UDP_LOSS_TIMEOUT_MS), seq: 0 };
  }

  async open(): Promise<{ localPort?: number }> {
    const { spec } = this;
    if (spec.transport === "udp") {
      this.udp = await this.env.net.udpSocket({
        hostname: spec.bind?.host,
        port: spec.bind?.port,
        connect: { hostname: spec.connect.host, port: spec.connect.port },
        socket: { data: (_s, d) => (this.pings ? this.pingReply(d) : this.udpResponse()), error: () => {} },
      });
      applyOptions(this.env, this.udp.fd, spec.options);
      return { localPort: this.udp.port };
    }
    if (spec.perTransactionConnect) return {};
    this.tcp = await connectTcp(this.env, spec.connect, spec.bind, spec.options, this.conn(), this.tcpHandlers);
    this.ctx.c[this.ctx.o + Slot.connections]!++;
    return { localPort: this.tcp.localPort };
  }

  private conn(): Conn {
    return { got: 0, sentAt: [], closed: false };
  }

  private readonly tcpHandlers = {
    data: (s: TcpSocket<Conn>, d: Uint8Array) => this.tcpResponse(s, d.byteLength),
    close: (s: TcpSocket<Conn>) => {
      if (s.data.detached) return;
      s.data.closed = true;
      this.ctx.c[this.ctx.o + Slot.closed]!++;
      if (this.spec.perTransactionConnect) return this.crrClosed(s);
      if (this.running) this.ctx.end("eof");
      this.stopped?.();
    },
    drain: () => {},
    error: () => {},
  };

  tcpFds(): number[] {
    if (this.blocking) return this.blocking.data.closed ? [] : [this.blocking.fd];
    return this.tcp ? openFds([this.tcp]) : [];
  }

  go(): void {
    this.running = true;
    this.ctx.touch();
    if (this.pings) {
      this.ping();
      this.pings.timer = setInterval(() => this.ping(), this.spec.gapMs);
    } else if (this.spec.transport === "udp") {
      for (let i = 0; i < this.spec.inFlight; i++) this.udpSend();
    } else if (this.spec.perTransactionConnect) {
      this.crrBlocking = this.crrBlockingTarget();
      if (this.crrBlocking) this.crrBlockingSlice();
      else void this.crrNext();
    } else if (this.spec.gapMs > 0) {
      // Paced: the socket's events drive it, as a blocking read would hold the Worker through each gap.
      this.tcpSend(this.tcp!);
    } else {
      this.blocking = BlockingSocket.take(this.env, this.tcp!, () => (this.tcp!.data = { ...this.tcp!.data, detached: true }));
      const wire: Wire = this.blocking ?? this.tcp!;
      for (let i = 0; i < this.spec.inFlight; i++) this.tcpSend(wire);
      if (this.blocking) this.blockingSlice();
    }
  }

  /** Blocking mode: read responses (each sends the next request) for one slice, then let the Worker breathe. */
  private readonly blockingSlice = (): void => {
    const b = this.blocking;
    if (!b || !this.running) return;
    const st = b.data;
    const loops = this.spec.inFlight === 1 && this.spec.limitTransactions === 0 && st.got === 0 && st.sentAt.length === 1 ? b.loops() : undefined;
    const r = loops ? this.sliceInC(b, loops) : b.readSlice(this.readBuffer(), (n) => this.tcpResponse(b, n), () => this.running);
    if (r === "eof" || r === "error") return this.blockingEnded(b, r);
    if (!this.running) return;
    if (this.env.streamsHere() > 1) return void this.unblock(b);
    yieldThen(this.blockingSlice);
  };

  /**
   * blockingSlice's ping-pong as one call into rr-loops.c, which stamps with its own clock (CLOCK_MONOTONIC in µs):
   * the request in flight crosses over as a stamp on that clock. A read or send out of the plain goes on here.
   */
  private sliceInC(b: BlockingSocket<Conn>, loops: RrLoops): ReadResult | "slice" {
    const st = b.data;
    const offsetUs = (this.loopClockOffsetUs ??= loops.nowUs() - nowMs() * 1000);
    const out = this.loopOut.fill(0);
    out[3] = st.sentAt[0]! * 1000 + offsetUs;
    const end = loops.client(b.fd, this.readBuffer(), this.req, this.spec.responseSize, SLICE_MS * 1000, this.ctx, out);
    st.sentAt[0] = (out[3]! - offsetUs) / 1000;
    if (out[0]! > 0) this.ctx.touch();
    if (end === LoopEnd.odd) this.tcpResponse(b, out[2]!);
    // The rest of a request the kernel took in part (a full socket buffer): written as the event-loop path would.
    const w = out[2]!;
    if (end === LoopEnd.partial && w >= 0 && writeAll(b, this.req.subarray(w))) this.ctx.c[this.ctx.o + Slot.bytes]! += this.req.byteLength - w;
    return readResultOf(end);
  }

  private blockingEnded(b: BlockingSocket<Conn>, r: "eof" | "error"): void {
    b.data.closed = true;
    b.close();
    this.ctx.c[this.ctx.o + Slot.closed]!++;
    if (this.running) this.ctx.end(r, r === "error" ? new Error("the connection failed in the middle of a transaction") : undefined);
    this.stopped?.();
  }

  /** Another stream arrived on this Worker: the connection goes back to the event loop, transactions in flight. */
  private async unblock(b: BlockingSocket<Conn>): Promise<void> {
    this.blocking = undefined;
    try {
      this.tcp = await b.release(this.env, this.tcpHandlers);
    } catch (e) {
      this.ctx.end("error", e);
    }
  }

  private done(startedAt: number): void {
    const { c, o } = this.ctx;
    const now = nowMs();
    const us = (now - startedAt) * 1000;
    c[o + Slot.transactions]!++;
    this.ctx.latency(us);
    c[o + Slot.lastActivityMs] = now;
    const limit = this.spec.limitTransactions;
    if (limit > 0 && c[o + Slot.transactions]! >= limit) {
      this.ctx.end("limit");
      void this.stop();
    }
  }

  private readBuffer(): Uint8Array {
    return (this.readBuf ??= new Uint8Array(Math.max(this.spec.responseSize, 64 * 1024)));
  }

  private tcpSend(s: Wire): void {
    // The clock starts before the write: on loopback the answer can be ready by the time write() returns.
    s.data.sentAt.push(nowMs());
    if (writeAll(s, this.req)) this.ctx.c[this.ctx.o + Slot.bytes]! += this.req.byteLength;
  }

  /** The next transaction: at once, or gapMs after the last one started. */
  private next(s: Wire, lastSentAt: number): void {
    const wait = lastSentAt + this.spec.gapMs - nowMs();
    if (wait <= 0) return this.tcpSend(s);
    this.gapTimer = setTimeout(() => {
      this.gapTimer = undefined;
      if (this.running) this.tcpSend(s);
    }, wait);
  }

  private tcpResponse(s: Wire, n: number): void {
    const st = s.data;
    st.got += n;
    this.ctx.c[this.ctx.o + Slot.bytes]! += n;
    const resp = this.spec.responseSize;
    while (st.got >= resp && st.sentAt.length > 0) {
      // Before the server's close reaches Bun, which closes the fd with it.
      if (this.spec.perTransactionConnect) this.firstTcpInfo(s.fd);
      st.got -= resp;
      const sentAt = st.sentAt.shift()!;
      this.done(sentAt);
      if (this.running && !this.spec.perTransactionConnect) this.next(s, sentAt);
    }
    if (this.spec.perTransactionConnect && st.sentAt.length === 0) st.got = 0;
  }

  /**
   * TCP_CRR alone on this Worker, to an IP literal, with no socket options or local bind to apply: each transaction
   * is blocking socket/connect/send/recv/close calls (as netperf's loop), no Bun socket object per connection.
   */
  private crrBlockingTarget(): RrClient["crrBlocking"] {
    const { io } = this.env;
    const family = familyOf(this.spec.connect.host);
    if (!io || !family || this.spec.bind || Object.values(this.spec.options).some((v) => v !== undefined) || this.env.streamsHere() !== 1) return undefined;
    return { io, family, sockaddr: encodeSockaddr(family, this.spec.connect.host, this.spec.connect.port) };
  }

  private readonly crrBlockingSlice = (): void => {
    const b = this.crrBlocking;
    if (!b || !this.running) return;
    // The first connection's MSS is read here (firstTcpInfo), and rr-loops.c needs a response to wait for: TCP_CC's
    // connect-and-close stays here throughout.
    const inC = this.spec.limitTransactions === 0 && this.spec.responseSize > 0 && (this.tcpInfoTaken || !this.env.sockopt);
    const loops = inC ? b.io.loops() : undefined;
    if (loops) this.crrSliceInC(b, loops);
    else {
      const end = nowMs() + SLICE_MS;
      while (this.running && nowMs() < end && this.crrBlockingOnce(b));
    }
    if (!this.running) return;
    if (this.env.streamsHere() > 1) {
      this.crrBlocking = undefined;
      return void this.crrNext();
    }
    yieldThen(this.crrBlockingSlice);
  };

  /** crrBlockingSlice's transactions as one call into rr-loops.c. */
  private crrSliceInC(b: NonNullable<RrClient["crrBlocking"]>, loops: RrLoops): void {
    const out = this.loopOut.fill(0);
    loops.crrClient(b.family === "ipv4" ? AF_INET : AF_INET6, b.sockaddr, CRR_BOUNDS, this.req, this.spec.responseSize, this.readBuffer(), SLICE_MS * 1000, this.ctx, out);
    if (out[0]! > 0) this.ctx.touch();
  }

  /** One connect-request-response-close; false when the connect failed (counted; the slice yields). */
  private crrBlockingOnce(b: NonNullable<RrClient["crrBlocking"]>): boolean {
    const { c, o } = this.ctx;
    const start = nowMs();
    const fd = b.io.connect(b.family, b.sockaddr, CRR_WAIT_MS);
    if (fd < 0) {
      c[o + Slot.sendErrors]!++;
      return false;
    }
    c[o + Slot.connections]!++;
    const req = this.req;
    let ok = writeAll({ write: (buf, off, len) => b.io.send(fd, off === 0 ? buf : buf.subarray(off, off + len), len) }, req);
    if (ok) c[o + Slot.bytes]! += req.byteLength;
    const buf = this.readBuffer();
    let got = 0;
    // The whole response, each wait bounded. The server closes after it, so its FIN is here or on its way: our close
    // needs no read of it (netperf's extra recv to EOF is one system call per transaction we skip). With no response
    // (TCP_CC) the server's close is what the transaction waits for.
    const connectOnly = this.spec.responseSize === 0;
    for (let n = 1; ok && n > 0 && (got < this.spec.responseSize || connectOnly); ) {
      n = b.io.recv(fd, buf, buf.byteLength);
      if (n > 0) got += n;
      else if (n < 0) ok = false;
    }
    c[o + Slot.bytes]! += got;
    if (ok) this.firstTcpInfo(fd);
    b.io.close(fd);
    c[o + Slot.closed]!++;
    if (ok && got >= this.spec.responseSize) this.done(start);
    else c[o + Slot.sendErrors]!++;
    return true;
  }

  /**
   * netperf reads TCP_MAXSEG of a connect test's first connection, after its transaction and before its close (the
   * sampler never sees these short-lived sockets): the stream's TCP_INFO comes from there.
   */
  private firstTcpInfo(fd: number | undefined): void {
    if (this.tcpInfoTaken || fd === undefined || !this.env.sockopt) return;
    const info = this.env.sockopt.tcpInfo(fd);
    if (!info) return;
    this.tcpInfoTaken = true;
    this.ctx.tcpInfo(info);
  }

  private tcpInfoTaken = false;

  private async crrNext(): Promise<void> {
    if (!this.running) return this.stopped?.();
    const start = nowMs();
    try {
      const s = await connectTcp(this.env, this.spec.connect, this.spec.bind, this.spec.options, this.conn(), this.tcpHandlers, true);
      this.ctx.c[this.ctx.o + Slot.connections]!++;
      // Stopped while connecting: stop() found no open connection and has already ended the stream.
      if (!this.running) return s.end();
      this.crrOpen = s;
      s.data.sentAt.push(start);
      // Counted as the persistent-connection and blocking paths count it: the request is part of the transaction.
      if (writeAll(s, this.req)) this.ctx.c[this.ctx.o + Slot.bytes]! += this.req.byteLength;
    } catch {
      // A refused or failed connect is one failed transaction; CRR goes on, as netperf's does.
      this.ctx.c[this.ctx.o + Slot.sendErrors]!++;
      if (this.running) setTimeout(() => void this.crrNext(), 1);
    }
  }

  /** CRR: the transaction ends when the server closes after its response. */
  private crrClosed(s: TcpSocket<Conn>): void {
    this.crrOpen = undefined;
    if (s.data.sentAt.length > 0 && s.data.got >= this.spec.responseSize) this.done(s.data.sentAt[0]!);
    void this.crrNext();
  }

  private udpSend(): void {
    this.udpPending.push(nowMs());
    try {
      this.udp!.send(this.req);
    } catch {
      this.ctx.c[this.ctx.o + Slot.sendErrors]!++;
    }
    this.ctx.c[this.ctx.o + Slot.bytes]! += this.req.byteLength;
    this.armUdpTimer();
  }

  private armUdpTimer(): void {
    if (this.udpTimer) clearTimeout(this.udpTimer);
    this.udpTimer = setTimeout(() => {
      this.udpTimer = undefined;
      if (!this.running) return;
      this.ctx.c[this.ctx.o + Slot.lost]! += this.udpPending.length;
      const n = this.udpPending.length;
      this.udpPending = [];
      for (let i = 0; i < n; i++) this.udpSend();
    }, UDP_LOSS_TIMEOUT_MS);
  }

  private ping(): void {
    const p = this.pings!;
    const now = nowMs();
    this.ctx.c[this.ctx.o + Slot.lost]! += p.book.expire(now);
    writePing(this.req, p.seq, now);
    p.book.sent(p.seq++, now);
    try {
      this.udp!.send(this.req);
    } catch {
      this.ctx.c[this.ctx.o + Slot.sendErrors]!++;
    }
    this.ctx.c[this.ctx.o + Slot.bytes]! += this.req.byteLength;
  }

  private pingReply(d: Uint8Array): void {
    const stamp = readPing(d);
    const sent = stamp && this.pings!.book.answered(stamp.seq, stamp.sentMs);
    if (sent !== undefined && this.running) this.done(sent);
  }

  private udpResponse(): void {
    const started = this.udpPending.shift();
    if (started === undefined) return; // a response to a transaction already counted lost
    this.done(started);
    if (this.running) this.udpSend();
  }

  async stop(): Promise<void> {
    if (!this.running && this.ctx.ended) return;
    this.running = false;
    if (this.udpTimer) clearTimeout(this.udpTimer);
    clearTimeout(this.gapTimer);
    clearInterval(this.pings?.timer);
    if (this.udp) {
      if (this.spec.endMarker === "zero-length-x3") {
        for (let i = 0; i < 3; i++) {
          try {
            this.udp.send(new Uint8Array(0));
          } catch {
            break;
          }
        }
      }
      this.udp.close();
    }
    if (this.blocking) return this.stopBlocking(this.blocking);
    const s = this.tcp ?? this.crrOpen;
    if (s && !s.data.closed) {
      // As netperf: let the transaction in flight complete, then FIN and read to the server's EOF. Closing with
      // a response still coming would make the server's answer meet a reset.
      const drained = Date.now() + 1_000;
      while (s.data.sentAt.length > 0 && !s.data.closed && Date.now() < drained) await new Promise((r) => setTimeout(r, 1));
      // TCP_CRR: the server's close during that wait ended the transaction, and the close handler ran before a
      // stopped() existed to call; waiting for it would sit out the 2 s deadline.
      if (!s.data.closed) await new Promise<void>((resolve) => {
        const t = setTimeout(() => {
          s.terminate();
          resolve();
        }, 2_000);
        this.stopped = () => {
          clearTimeout(t);
          resolve();
        };
        halfClose(this.env, s);
      });
    }
    this.ctx.end("stopped");
  }

  /** As the event-loop path: finish the transactions in flight, FIN, read to the server's EOF — each wait bounded. */
  private async stopBlocking(b: BlockingSocket<Conn>): Promise<void> {
    const buf = this.readBuffer();
    const onData = (n: number) => this.tcpResponse(b, n);
    const closedBy = (r: UntilResult) => {
      if (r !== "eof" && r !== "error") return false;
      b.data.closed = true;
      this.ctx.c[this.ctx.o + Slot.closed]!++;
      return true;
    };
    if (!closedBy(await b.readUntil(buf, onData, () => b.data.sentAt.length === 0, 1_000))) {
      b.shutdownWrite();
      closedBy(await b.readUntil(buf, onData, () => false, 2_000));
    }
    b.close();
    this.ctx.end("stopped");
  }
}
