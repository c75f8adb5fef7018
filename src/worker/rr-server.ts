import { Slot } from "../counters.ts";
import type { RrServerSpec } from "../stream-spec.ts";
import type { TcpListener, TcpSocket, UdpSocket } from "../net/types.ts";
import { nowMs, openFds, type Runner, type StreamContext } from "./context.ts";
import { applyOptions, reportBuffers, type WorkerEnv } from "./sockets.ts";
import { BlockingAccepted, BlockingSocket, SLICE_MS, WAIT_MS, yieldThen, type ReadResult } from "./blocking-socket.ts";
import { EAGAIN, notNow } from "../sockopt/blocking-io.ts";
import { encodeSockaddr, familyOf } from "../sockopt/sockaddr.ts";
import { LOOP_OUT, LoopEnd, readResultOf, type RrLoops } from "../sockopt/rr-loops.ts";

interface Conn {
  got: number; // request bytes received towards the next full request
  owed: number; // response bytes still to write (partial writes wait for drain)
  closed: boolean;
  /** Handed over to a BlockingSocket: the Bun socket's close is not the peer's. */
  detached?: boolean;
}

/** Where responses go: a Bun socket, or the same connection in blocking mode. */
type Wire = Pick<TcpSocket<Conn>, "data" | "write"> & { end?(): void };

const newConn = (): Conn => ({ got: 0, owed: 0, closed: false });

/** Reads between looks at the clock in a blocking slice (see readSlice): nothing else here needs the time. */
const CLOCK_EVERY = 4;

/** Bun's listen backlog (runtime notes, C7), kept for the blocking listener. */
const BACKLOG = 512;

/**
 * Request/response server: for every full request, one response. With `closeAfterResponse` each connection serves
 * one transaction and is closed by us (TCP_CRR, where the server closes first). UDP answers each datagram.
 */
export class RrServer implements Runner {
  private listener: TcpListener | undefined;
  private udp: UdpSocket | undefined;
  private readonly socks = new Set<TcpSocket<Conn>>();
  private readonly resp: Uint8Array;
  private accepted = 0;
  private closedCount = 0;
  private readBuf: Uint8Array | undefined;
  /** rr-loops.c's results of one call. */
  private readonly loopOut = new Float64Array(LOOP_OUT);
  private stopping = false;
  private readonly blocking: BlockingAccepted<Conn>;
  /** TCP_CRR alone on its Worker: our own blocking listener instead of Bun's (see openBlockingListener). */
  private blockingListener: number | undefined;

  constructor(private readonly spec: RrServerSpec, private readonly ctx: StreamContext, private readonly env: WorkerEnv) {
    this.resp = new Uint8Array(spec.responseSize).fill(0x6e);
    this.blocking = new BlockingAccepted<Conn>({
      env: this.env,
      handlers: this.handlers,
      socks: this.socks,
      slice: (b) => this.serveSlice(b),
      stopped: () => this.stopping,
      peerClosed: (data) => this.peerClosed(data),
      failed: (e) => this.ctx.end("error", e),
    });
  }

  private readonly handlers = {
    open: (s: TcpSocket<Conn>) => {
      s.data = newConn();
      this.accepted++;
      // All its connections are in: the listener's fd goes (10,000 flows are 10,000 fds, not 20,000).
      if (this.listener && this.spec.connections > 0 && this.accepted >= this.spec.connections) {
        this.listener.stop(false);
        this.listener = undefined;
      }
      this.socks.add(s);
      this.ctx.c[this.ctx.o + Slot.connections]!++;
      if (!this.spec.closeAfterResponse) {
        try {
          applyOptions(this.env, s.fd, this.spec.options);
          if (this.accepted === 1) reportBuffers(this.env, this.ctx, s.fd, this.spec.options);
        } catch (e) {
          this.ctx.end("error", e);
        }
      }
      // An adopted connection switches after its pending bytes are answered (open()).
      if (!this.spec.adopt) this.tryBlocking(s);
      if (this.spec.requestSize === 0) this.connectOnly(s);
    },
    data: (s: TcpSocket<Conn>, d: Uint8Array) => {
      this.ctx.touch();
      this.received(s, d.byteLength);
    },
    drain: (s: TcpSocket<Conn>) => this.flush(s),
    close: (s: TcpSocket<Conn>) => {
      if (!s.data || s.data.closed || s.data.detached) return;
      this.socks.delete(s);
      this.peerClosed(s.data);
    },
    error: () => {},
  };

  private peerClosed(st: Conn): void {
      st.closed = true;
      this.closedCount++;
      this.ctx.c[this.ctx.o + Slot.closed]!++;
      const expected = this.spec.connections;
      if (expected > 0 && this.closedCount >= expected && !this.spec.closeAfterResponse) this.ctx.end("eof");
  }

  private received(s: Wire, n: number): void {
    const st = s.data;
    const { c, o } = this.ctx;
    c[o + Slot.bytes]! += n;
    st.got += n;
    const req = this.spec.requestSize;
    while (req > 0 && st.got >= req) {
      st.got -= req;
      st.owed += this.resp.byteLength;
      c[o + Slot.transactions]!++;
    }
    this.flush(s);
  }

  /** TCP_CC: the connection is the transaction; we close it at once, as netserver does after accept(). */
  private connectOnly(s: Wire): void {
    this.ctx.c[this.ctx.o + Slot.transactions]!++;
    this.ctx.touch();
    this.flush(s);
  }

  /**
   * One persistent connection alone on this Worker is served in blocking mode (see BlockingAccepted) until it
   * closes, the test stops, or another stream or connection needs the Worker.
   */
  private tryBlocking(s: TcpSocket<Conn>): void {
    if (!this.spec.closeAfterResponse) this.blocking.take(s, () => (s.data = { ...s.data, detached: true }));
  }


  /**
   * Blocking mode's slice: read, count, answer, as netserver's loop does. A read of exactly one request, with nothing
   * owed, is answered here by one send; anything else (partial requests or sends, a transaction limit) goes through
   * received(). Against received() for every read, a pinned TCP_RR 1,1 gains about 1 %. Activity is stamped once
   * per slice that had any.
   */
  private serveSlice(b: BlockingSocket<Conn>): ReadResult | "slice" {
    const { c, o } = this.ctx;
    const st = b.data;
    const { resp } = this;
    const size = resp.byteLength;
    const req = this.spec.requestSize;
    const plain = this.spec.limitTransactions === 0;
    const loops = plain && st.got === 0 && st.owed === 0 ? b.loops() : undefined;
    if (loops) return this.serveInC(b, loops);
    let reads = 0;
    const r = b.readSlice(
      this.readBuffer(),
      (n) => {
        reads++;
        if (!plain || n !== req || st.got !== 0 || st.owed !== 0) return this.received(b, n);
        c[o + Slot.transactions]!++;
        const w = b.write(resp);
        c[o + Slot.bytes]! += n + Math.max(w, 0);
        // A response the peer did not take whole is finished by flush() after the next read, as in received().
        st.owed = w > 0 ? size - w : size;
      },
      () => !this.stopping,
      CLOCK_EVERY,
    );
    if (reads > 0) this.ctx.touch();
    return r;
  }

  /** serveSlice's plain case as one call into rr-loops.c; a read or send out of the plain goes on here. */
  private serveInC(b: BlockingSocket<Conn>, loops: RrLoops): ReadResult | "slice" {
    const out = this.loopOut.fill(0);
    const end = loops.serve(b.fd, this.readBuffer(), this.spec.requestSize, this.resp, SLICE_MS * 1000, this.ctx, out);
    if (out[0]! > 0 || end === LoopEnd.odd) this.ctx.touch();
    if (end === LoopEnd.odd) this.received(b, out[2]!);
    if (end === LoopEnd.partial) {
      const w = out[2]!;
      b.data.owed = w > 0 ? this.resp.byteLength - w : this.resp.byteLength;
      this.flush(b);
    }
    return readResultOf(end);
  }

  private readBuffer(): Uint8Array {
    return (this.readBuf ??= new Uint8Array(Math.max(this.spec.requestSize, 64 * 1024)));
  }

  private flush(s: Wire): void {
    const st = s.data;
    const size = this.resp.byteLength;
    while (st.owed > 0) {
      const off = (size - (st.owed % size)) % size;
      const n = s.write(this.resp, off, Math.min(size - off, st.owed));
      if (n <= 0) return;
      st.owed -= n;
      this.ctx.c[this.ctx.o + Slot.bytes]! += n;
    }
    if (this.spec.closeAfterResponse && st.got === 0) s.end?.();
    const limit = this.spec.limitTransactions;
    if (limit > 0 && this.ctx.c[this.ctx.o + Slot.transactions]! >= limit) this.ctx.end("limit");
  }

  async open(): Promise<{ localPort?: number }> {
    const { spec } = this;
    if (spec.transport === "udp") {
      if (!spec.listen) throw new Error("UDP rr-server needs listen");
      this.udp = await this.env.net.udpSocket({
        hostname: spec.listen.host,
        port: spec.listen.port,
        socket: {
          data: (sock, d, port, address) => {
            const { c, o } = this.ctx;
            if (d.byteLength === 0) return this.ctx.end("marker");
            c[o + Slot.bytes]! += d.byteLength;
            c[o + Slot.transactions]!++;
            c[o + Slot.lastActivityMs] = nowMs();
            // Echoed, the request's bytes lead the response: a timestamped ping's stamp goes back to its sender.
            if (this.spec.echo) this.resp.set(d.subarray(0, Math.min(d.byteLength, this.resp.byteLength)));
            sock.send(this.resp, port, address);
            const limit = this.spec.limitTransactions;
            if (limit > 0 && c[o + Slot.transactions]! >= limit) this.ctx.end("limit");
          },
          error: () => {},
        },
      });
      applyOptions(this.env, this.udp.fd, spec.options);
      reportBuffers(this.env, this.ctx, this.udp.fd, spec.options);
      return { localPort: this.udp.port };
    }
    if (spec.adopt) {
      const s = await this.env.net.connect({ fd: spec.adopt.fd, data: newConn(), socket: this.handlers });
      if (spec.adopt.pending > 0) this.received(s, spec.adopt.pending);
      this.tryBlocking(s);
      return {};
    }
    if (!spec.listen) throw new Error("rr-server needs listen or adopt");
    const port = this.openBlockingListener(spec.listen);
    if (port !== undefined) return { localPort: port };
    this.listener = this.env.net.listen({ hostname: spec.listen.host, port: spec.listen.port, data: newConn(), socket: this.handlers });
    return { localPort: this.listener.port };
  }

  /**
   * TCP_CRR's server, alone on its Worker and with no peer filter, takes its connections as netserver does: a
   * blocking accept, read, write and close per transaction (four system calls), where Bun's event loop adds an epoll
   * wait, registration and removal, socket options and a failed accept for each. Accepted sockets inherit the
   * listener's wait bounds. Returns the port, or undefined to listen with Bun (no bun:ffi, another family, a failure
   * Bun then reports in its words).
   */
  private openBlockingListener(at: { host: string; port: number }): number | undefined {
    const { io, sockopt } = this.env;
    const family = familyOf(at.host);
    if (!this.spec.closeAfterResponse || this.spec.allow || !io || !sockopt || !family || this.env.streamsHere() !== 1) return undefined;
    const fd = io.listen(family, encodeSockaddr(family, at.host, at.port), BACKLOG, WAIT_MS);
    if (fd < 0) return undefined;
    const port = sockopt.localAddress(fd)?.port;
    if (port === undefined) {
      io.close(fd);
      return undefined;
    }
    this.blockingListener = fd;
    yieldThen(this.acceptSlice);
    return port;
  }

  /**
   * Accepts and serves connections for one slice. Once another stream shares the Worker, the listener goes to Bun's
   * event loop for good: a client on this very Worker can send only while the event loop runs.
   */
  private readonly acceptSlice = (): void => {
    const lfd = this.blockingListener;
    const io = this.env.io;
    if (lfd === undefined || !io || this.stopping) return;
    if (this.env.streamsHere() > 1) return this.listenWithBun(lfd);
    // rr-loops.c serves a request and a response: TCP_CC's connect-and-close (both sizes 0) stays here.
    const loops = this.spec.limitTransactions === 0 && this.spec.requestSize > 0 ? io.loops() : undefined;
    if (loops) {
      if (this.acceptInC(lfd, loops)) yieldThen(this.acceptSlice);
      else setTimeout(this.acceptSlice, WAIT_MS);
      return;
    }
    const end = nowMs() + SLICE_MS;
    while (this.blockingListener !== undefined && !this.stopping) {
      const fd = io.accept(lfd);
      if (fd >= 0) this.serveAccepted(BlockingSocket.adopt(this.env, fd, newConn()));
      else if (!notNow(fd)) {
        // Out of fds or memory: wait a little, as an event loop would until the next readiness.
        setTimeout(this.acceptSlice, WAIT_MS);
        return;
      }
      if (fd === -EAGAIN || nowMs() > end) break;
    }
    yieldThen(this.acceptSlice);
  };

  private listenWithBun(fd: number): void {
    this.blockingListener = undefined;
    this.env.sockopt!.setNonBlocking(fd, true);
    const at = this.spec.listen!;
    this.listener = this.env.net.listen({ hostname: at.host, port: at.port, fd, data: newConn(), socket: this.handlers });
  }

  /**
   * One connection: its request, our response, our close. A client slower than WAIT_MS goes on in the event loop so
   * it holds no one else up.
   */
  private serveAccepted(b: BlockingSocket<Conn>): void {
    this.accepted++;
    this.ctx.c[this.ctx.o + Slot.connections]!++;
    this.serveOn(b);
  }

  /** serveAccepted's loop for a connection already counted; `firstRead`: what a read of it returned (bytes or -errno). */
  private serveOn(b: BlockingSocket<Conn>, firstRead?: number): void {
    this.ctx.touch();
    if (this.spec.requestSize === 0) {
      this.connectOnly(b);
      return this.peerClosed(b.data);
    }
    const buf = this.readBuffer();
    for (let first = firstRead; ; first = undefined) {
      const r = first === undefined ? b.readOnce(buf, (n) => this.received(b, n)) : b.readResult(first, (n) => this.received(b, n));
      if (b.closed) return this.peerClosed(b.data);
      if (r === "eof" || r === "error") {
        b.close();
        return this.peerClosed(b.data);
      }
      if (r === "timeout") {
        b.rejoin(this.env, this.handlers, this.socks).catch((e) => this.ctx.end("error", e));
        return;
      }
    }
  }

  /**
   * acceptSlice's plain transactions as one call into rr-loops.c; a connection out of the plain goes on in
   * serveOn. False when accept failed for want of fds or memory: the caller waits.
   */
  private acceptInC(lfd: number, loops: RrLoops): boolean {
    const out = this.loopOut.fill(0);
    const end = loops.crrServe(lfd, this.readBuffer(), this.spec.requestSize, this.resp, SLICE_MS * 1000, this.ctx, out);
    const accepted = out[2]!;
    const handedBack = end === LoopEnd.odd || end === LoopEnd.partial ? 1 : 0;
    this.accepted += accepted;
    this.closedCount += accepted - handedBack;
    if (accepted > 0) this.ctx.touch();
    if (end === LoopEnd.error) return false;
    if (!handedBack) return true;
    const b = BlockingSocket.adopt(this.env, out[3]!, newConn());
    if (end === LoopEnd.odd) this.serveOn(b, out[4]!);
    else {
      b.data.owed = this.resp.byteLength - out[4]!;
      this.flush(b);
      if (b.closed) this.peerClosed(b.data);
      else this.serveOn(b);
    }
    return true;
  }


  go(): void {}

  tcpFds(): number[] {
    const b = this.blocking.socket;
    return b ? [b.fd] : openFds(this.socks);
  }

  stop(): Promise<void> {
    this.stopping = true;
    this.listener?.stop(false);
    this.listener = undefined;
    if (this.blockingListener !== undefined) this.env.io?.close(this.blockingListener);
    this.blockingListener = undefined;
    this.udp?.close();
    for (const s of this.socks) s.end();
    const b = this.blocking.socket;
    if (b) {
      // Our FIN; the client reads to it and closes, as it would with the event-loop socket's end().
      b.shutdownWrite();
      b.close();
      this.blocking.socket = undefined;
    }
    this.ctx.end("stopped");
    return Promise.resolve();
  }
}
