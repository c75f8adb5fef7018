import { Slot } from "../counters.ts";
import type { TcpRecvSpec } from "../stream-spec.ts";
import type { TcpListener, TcpSocket } from "../net/types.ts";
import { nowMs, openFds, type Runner, type StreamContext, wallUs } from "./context.ts";
import { BurstClock } from "./burst-clock.ts";
import { applyOptions, connectTcp, rearmQuickAck, reportBuffers, type WorkerEnv } from "./sockets.ts";
import { BlockingAccepted } from "./blocking-socket.ts";
import { PeerFilter } from "./peer-filter.ts";
import { POLLIN, readTurn, type GroupMember } from "./poll-group.ts";
import { notNow } from "../sockopt/blocking-io.ts";

interface ConnState {
  closed: boolean;
  /** Handed over to a BlockingSocket: the Bun socket's close is not the peer's. */
  detached?: boolean;
}

/** Read size in blocking mode when the spec names none: big reads, few system calls. */
const BLOCKING_READ = 1 << 20;

/**
 * Bulk TCP receiver: counts bytes and never copies them. One stream is one listener (any number of connections, as
 * an ntttcp port thread), one adopted socket (iperf3/iperf data connection), or sockets it connects itself (reverse).
 */
export class TcpReceiver implements Runner {
  private listener: TcpListener | undefined;
  private readonly socks = new Set<TcpSocket<ConnState>>();
  private accepted = 0;
  private closedCount = 0;
  private stopped = false;
  private readBuf: Uint8Array | undefined;
  private readonly filter: PeerFilter | undefined;
  private readonly blocking: BlockingAccepted<ConnState>;
  /** Connections the Worker's read group reads for this stream. */
  private readonly grouped = new Set<GroupMember>();
  private readAt: number | undefined;
  /** With `bursts`: the sender's stamped bursts, each timed as its last byte arrives. */
  private readonly bursts: BurstClock | undefined;

  constructor(private readonly spec: TcpRecvSpec, private readonly ctx: StreamContext, private readonly env: WorkerEnv) {
    this.filter = spec.allow && new PeerFilter(spec.allow, (line) => ctx.log(line));
    this.bursts = spec.bursts && new BurstClock(spec.bursts, (us) => ctx.latency(us));
    this.blocking = new BlockingAccepted<ConnState>({
      env,
      handlers: this.handlers,
      socks: this.socks,
      slice: (b) => {
        const buf = (this.readBuf ??= new Uint8Array(spec.readSize || BLOCKING_READ));
        let reads = 0;
        const r = b.readSlice(buf, (n) => (reads++, this.counted(buf, n), this.rearm(b.fd)), () => this.reads());
        if (reads > 0) ctx.touch();
        if (this.readsLeft() === 0) ctx.end("limit");
        return r;
      },
      regroup: (b) => this.joinGroup([{ fd: b.fd, st: b.data }]),
      stopped: () => this.stopped,
      peerClosed: (data) => this.peerClosed(data),
      failed: (e) => ctx.end("error", e),
    });
  }

  private readonly handlers = {
    open: (s: TcpSocket<ConnState>) => {
      if (this.listener && this.filter && !this.filter.admits(s.remoteAddress)) {
        s.terminate();
        return;
      }
      s.data = { closed: false };
      this.accepted++;
      // All its connections are in: the listener's fd goes (10,000 flows are 10,000 fds, not 20,000).
      if (this.listener && this.spec.connections > 0 && this.accepted >= this.spec.connections) {
        this.listener.stop(false);
        this.listener = undefined;
      }
      this.socks.add(s);
      this.ctx.c[this.ctx.o + Slot.connections]!++;
      try {
        applyOptions(this.env, s.fd, this.spec.options);
        if (this.accepted === 1) reportBuffers(this.env, this.ctx, s.fd, this.spec.options);
      } catch (e) {
        this.ctx.end("error", e);
      }
      this.ctx.touch();
      if (this.spec.listen && this.spec.connections > 0 && this.accepted >= this.spec.connections) this.tryBlocking();
    },
    data: (s: TcpSocket<ConnState>, d: Uint8Array) => {
      const { c, o } = this.ctx;
      // The event loop reads whatever is there (up to half a MiB), where a reader of readSize bytes would have made
      // one call per readSize: that many reads are counted, so bytes per read never exceed readSize. At the read
      // limit the rest is left uncounted, as it would be left unread in the socket.
      const left = this.readsLeft();
      if (left === 0) return;
      const reads = Math.min(left, Math.ceil(d.byteLength / this.spec.readSize));
      c[o + Slot.packets]! += reads;
      c[o + Slot.bytes]! += Math.min(d.byteLength, reads * this.spec.readSize);
      this.timeRead();
      this.bursts?.feed(d, wallUs());
      this.rearm(s.fd);
      this.ctx.touch();
      if (reads === left) this.ctx.end("limit");
    },
    close: (s: TcpSocket<ConnState>) => {
      if (!s.data || s.data.closed || s.data.detached) return;
      this.socks.delete(s);
      this.peerClosed(s.data);
    },
    error: () => {},
  };

  /** One read of `n` bytes into `buf`, outside the event loop (blocking mode or the Worker's poll group). */
  private counted(buf: Uint8Array, n: number): void {
    const { c, o } = this.ctx;
    c[o + Slot.packets]!++;
    c[o + Slot.bytes]! += n;
    this.timeRead();
    this.bursts?.feed(buf.subarray(0, n), wallUs());
  }

  /** With the quickAck option: TCP_QUICKACK for the next read. */
  private rearm(fd: number | undefined): void {
    if (this.spec.options.quickAck) rearmQuickAck(this.env, this.ctx, fd);
  }

  /** Whether a read may be made now. */
  private reads(): boolean {
    return !this.stopped && this.readsLeft() > 0;
  }

  /**
   * Reads still allowed by `limitPackets` (Infinity without one): a receiver that stops after so many receive calls,
   * as NTttcp's count mode does, and closes with what is left unread.
   */
  private readsLeft(): number {
    const limit = this.spec.limitPackets;
    return limit > 0 ? Math.max(0, limit - this.ctx.c[this.ctx.o + Slot.packets]!) : Infinity;
  }

  private peerClosed(st: ConnState): void {
    st.closed = true;
    this.closedCount++;
    this.ctx.c[this.ctx.o + Slot.closed]!++;
    const expected = this.spec.connections;
    if (this.spec.endOnEof && expected > 0 && this.closedCount >= expected) this.ctx.end(this.stopped ? "stopped" : "eof");
  }

  /**
   * The stream's only connection, with nothing more to accept, alone on its Worker: read in blocking mode
   * (BlockingAccepted) in reads of the spec's size, until it closes, the test stops, or another stream arrives.
   */
  private tryBlocking(): void {
    const detach = (s: TcpSocket<ConnState>) => (s.data = { ...s.data, detached: true });
    const { sockopt, pollGroup } = this.env;
    if (sockopt && pollGroup?.open && this.env.streamsHere() > 1 && this.socks.size > 0) {
      const socks = [...this.socks].filter((s) => s.fd !== undefined && s.fd >= 0);
      this.socks.clear();
      const taken = socks.map((s) => {
        const st = s.data;
        detach(s);
        return { fd: sockopt.handOff(s)[0]!, st };
      });
      this.joinGroup(taken);
      return;
    }
    const [s] = this.socks;
    if (s) this.blocking.take(s, () => detach(s));
  }

  /**
   * Beside other receivers on this Worker, the connections are read by the Worker's poll group (PollGroup) until they
   * close, the stream stops, or a stream of another kind arrives: then they go back to the event loop with their state.
   */
  private joinGroup(conns: { fd: number; st: ConnState }[]): boolean {
    const { pollGroup: group, io } = this.env;
    if (!group?.open || !io) return false;
    const size = this.spec.readSize;
    for (const { fd, st } of conns) {
      const member: GroupMember = {
        fd,
        events: POLLIN,
        senderHere: this.spec.senderHere,
        wants: () => this.reads(),
        ready: (buf) => {
          const { read, last: n } = readTurn(io, fd, buf, size, () => this.reads(), (got) => (this.counted(buf, got), this.rearm(fd)));
          this.ctx.touch();
          if (this.readsLeft() === 0) this.ctx.end("limit");
          if (n > 0 || notNow(n)) return read;
          this.grouped.delete(member);
          group.drop(member);
          io.close(fd);
          this.peerClosed(st);
          return -1;
        },
        back: () => {
          this.grouped.delete(member);
          // `open` ran (counted and set up the connection) when it was accepted
          const { open: _ranAtAccept, ...rest } = this.handlers;
          this.env.net
            .connect({ fd, data: st, socket: rest })
            .then((s) => void this.socks.add(s))
            .catch((e: unknown) => this.ctx.end("error", e));
        },
      };
      this.grouped.add(member);
      group.add(member, size);
    }
    return true;
  }

  async open(): Promise<{ localPort?: number }> {
    const { spec } = this;
    if (spec.adopt) {
      this.ctx.c[this.ctx.o + Slot.bytes]! += spec.adopt.pending;
      if (spec.bursts) this.bursts?.feed(spec.bursts.lead, wallUs());
      const s = await this.env.net.connect({ fd: spec.adopt.fd, data: { closed: false }, socket: this.handlers });
      if (!this.socks.has(s)) this.socks.add(s);
      this.tryBlocking();
      return {};
    }
    if (spec.connect) {
      for (let i = 0; i < spec.connections; i++) {
        const s = await connectTcp(this.env, spec.connect, spec.bind, spec.options, { closed: false }, this.handlers);
        if (!this.socks.has(s)) this.socks.add(s);
      }
      this.tryBlocking();
      return {};
    }
    if (!spec.listen) throw new Error("tcp-recv needs listen, connect or adopt");
    this.listener = this.env.net.listen({ hostname: spec.listen.host, port: spec.listen.port, data: { closed: false }, socket: this.handlers });
    return { localPort: this.listener.port };
  }

  go(): void {
    if (this.spec.timeCalls) this.readAt = nowMs();
  }

  /** With timeCalls: a read's time runs from the end of the one before (the start of the test for the first). */
  private timeRead(): void {
    if (this.readAt === undefined) return;
    const t = nowMs();
    this.ctx.latency((t - this.readAt) * 1000);
    this.readAt = t;
  }

  tcpFds(): number[] {
    const b = this.blocking.socket;
    if (b) return [b.fd];
    return this.grouped.size > 0 ? [...openFds(this.socks), ...[...this.grouped].map((r) => r.fd)] : openFds(this.socks);
  }

  stop(): Promise<void> {
    this.stopped = true;
    this.listener?.stop(false);
    this.listener = undefined;
    for (const s of this.socks) s.terminate();
    this.blocking.socket?.close();
    this.blocking.socket = undefined;
    for (const r of this.grouped) {
      this.env.pollGroup?.drop(r);
      this.env.io?.close(r.fd);
    }
    this.grouped.clear();
    this.ctx.end("stopped");
    return Promise.resolve();
  }
}
