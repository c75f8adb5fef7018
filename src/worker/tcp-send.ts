import { Slot } from "../counters.ts";
import type { Pacer } from "../pacer.ts";
import type { TcpSendSpec } from "../stream-spec.ts";
import type { TcpHandlers, TcpSocket } from "../net/types.ts";
import { nowMs, openFds, wallUs, type Runner, type StreamContext } from "./context.ts";
import type { EndReason } from "./messages.ts";
import { applyOptions, connectTcp, halfClose, rearmQuickAck, reportBuffers, senderPacer, type WorkerEnv } from "./sockets.ts";
import { BlockingSocket, SLICE_MS, yieldThen } from "./blocking-socket.ts";
import { filledPayload } from "./payload.ts";
import { WriteStamper } from "./write-stamp.ts";
import { type DueFrame, FrameSchedule, runAt } from "./frames.ts";
import { CALLS_IN_A_ROW, POLLOUT, type GroupMember } from "./poll-group.ts";
import { sendResult } from "../sockopt/blocking-io.ts";
import { SyscallError } from "../sockopt/errno.ts";

interface ConnState {
  off: number; // offset into the payload of a partial write
  pre: number; // preamble bytes still to write
  closed: boolean;
  /** With timeCalls: when the write of the current payload began (ms). */
  writeAt?: number;
  /** Handed over to a BlockingSocket: the Bun socket's close is not the peer's. */
  detached?: boolean;
  /** With stampWrites: the current payload is stamped (a write the kernel refused whole does not stamp it twice). */
  stamped?: boolean;
  /** Why the connection broke (a reset, a broken pipe), for the stream's end: a front end may name it. */
  broke?: Error;
  /** The peer's FIN came (half-open sockets): nothing more will be read. */
  eof?: boolean;
}

/**
 * Bulk TCP sender: one stream = `connections` sockets fed from one preallocated buffer, round-robin on drain. With
 * countReceived it also counts what its sockets read (full duplex on one socket); the peer's EOF closes a socket.
 */
export class TcpSender implements Runner {
  private readonly buf: Uint8Array;
  private readonly stamper: WriteStamper | undefined;
  private readonly socks: TcpSocket<ConnState>[] = [];
  private running = false;
  private stopping = false;
  private pacer: Pacer | undefined;
  private waitTimer: ReturnType<typeof setTimeout> | undefined;
  private closedCount = 0;
  private onAllClosed: (() => void) | undefined;
  private reason: EndReason = "stopped";
  private blocking: BlockingSocket<ConnState> | undefined;
  private handlers: TcpHandlers<ConnState> | undefined;
  /** Connections the Worker's poll group writes for this stream. */
  private readonly grouped = new Map<GroupMember, ConnState>();
  /** Connections this stream opened or adopted. */
  private conns = 0;
  /** With frames: the schedule, the frame being written (its bytes still to go), and the write it is in. */
  private frames: { schedule: FrameSchedule; frame: DueFrame | undefined; left: number; chunk: number } | undefined;

  constructor(private readonly spec: TcpSendSpec, private readonly ctx: StreamContext, private readonly env: WorkerEnv) {
    this.buf = spec.payload ?? filledPayload(spec.writeSize, spec.fill);
    this.stamper = spec.stampWrites && new WriteStamper(this.buf, spec.stampWrites, wallUs);
  }

  async open(): Promise<{ localPort?: number }> {
    const { spec, ctx } = this;
    const { c, o } = ctx;
    const handlers = {
      drain: (s: TcpSocket<ConnState>) => this.pump(s),
      data: spec.countReceived
        ? (s: TcpSocket<ConnState>, d: Uint8Array) => {
            c[o + Slot.received]! += d.byteLength;
            c[o + Slot.lastActivityMs] = nowMs();
            if (spec.options.quickAck) rearmQuickAck(this.env, ctx, s.fd);
          }
        : () => {},
      end: (s: TcpSocket<ConnState>) => this.peerEnded(s),
      close: (s: TcpSocket<ConnState>, err?: Error) => this.closed(s, err),
      error: () => {},
    };
    this.handlers = handlers;
    const { halfOpen } = this;
    if (spec.adopt) {
      if (spec.countReceived) c[o + Slot.received]! += spec.adopt.pending;
      const s = await this.env.net.connect({ fd: spec.adopt.fd, data: this.state(), socket: handlers, allowHalfOpen: halfOpen });
      this.socks.push(s);
      // An adopted socket was connected elsewhere: its options (pacing, TOS, buffers) are set here, as on our own.
      applyOptions(this.env, s.fd, spec.options);
      reportBuffers(this.env, ctx, s.fd, spec.options);
    } else if (spec.connect) {
      for (let i = 0; i < spec.connections; i++) {
        this.socks.push(await connectTcp(this.env, spec.connect, spec.bind, spec.options, this.state(), handlers, false, halfOpen));
      }
    } else throw new Error("tcp-send needs connect or adopt");
    this.conns = this.socks.length;
    c[o + Slot.connections]! += this.conns;
    return { localPort: this.socks[0]?.localPort };
  }

  private state(): ConnState {
    return { off: 0, pre: this.spec.preamble?.byteLength ?? 0, closed: false };
  }

  tcpFds(): number[] {
    if (this.blocking) return this.blocking.data.closed ? [] : [this.blocking.fd];
    return this.grouped.size > 0 ? [...openFds(this.socks), ...[...this.grouped.keys()].map((m) => m.fd)] : openFds(this.socks);
  }

  go(): void {
    // The bucket starts when sending does (made at open, it would fill during set-up and burst over the rate).
    this.pacer = senderPacer(this.spec.rate, this.buf.byteLength);
    this.running = true;
    this.ctx.touch();
    // Unpaced and write-only: one connection alone on this Worker writes blocking (BlockingSocket); beside other bulk
    // streams, the Worker's poll group writes them.
    if (this.spec.frames) {
      const { c, o } = this.ctx;
      const head = this.spec.frameHead;
      if (head) c[o + Slot.bytes]! += head.bytes;
      this.frames = { schedule: new FrameSchedule(this.spec.frames, c, o, "start", head?.wallUs ?? wallUs()), frame: undefined, left: 0, chunk: 0 };
    }
    const writesOnly = !this.pacer && !this.spec.countReceived && !this.frames;
    const [only] = this.socks;
    if (only && this.socks.length === 1 && writesOnly) {
      this.blocking = BlockingSocket.take(this.env, only, () => (only.data = { ...only.data, detached: true }));
      if (this.blocking) {
        this.socks.length = 0;
        return this.sendSlice();
      }
    }
    const { sockopt } = this.env;
    if (sockopt && writesOnly && this.env.pollGroup?.open && this.env.streamsHere() > 1) {
      const taken = this.socks.filter((s) => !s.data.closed && s.fd !== undefined && s.fd >= 0);
      this.socks.length = 0;
      const conns = taken.map((s) => {
        const st = s.data;
        s.data = { ...st, detached: true };
        return { fd: sockopt.handOff(s)[0]!, st };
      });
      if (this.joinGroup(conns)) return;
    }
    for (const s of this.socks) this.pump(s);
  }

  private readonly sendSlice = (): void => {
    const b = this.blocking;
    if (!b || !this.running) return;
    const end = nowMs() + SLICE_MS;
    // 0 from a blocking write: the peer has not read for a whole wait; either way the Worker gets its turn.
    const r = this.writeRun(b.data, (buf, off, len) => b.write(buf, off, len), () => nowMs() <= end);
    if (r === "broken") return this.blockingBroken(b);
    if (r === "limit") return this.reachedLimit();
    this.ctx.touch();
    if (!this.running) return;
    if (this.env.streamsHere() > 1) {
      this.blocking = undefined;
      if (this.joinGroup([{ fd: b.fd, st: b.data }])) return;
      return void this.unblock(b);
    }
    yieldThen(this.sendSlice);
  };

  /**
   * The preamble's rest, then payloads, through `write` (bytes the kernel took: fewer than asked once the socket is
   * full; -errno once broken), until the socket is full, the byte limit, or `more()` says stop. Why it stopped.
   */
  private writeRun(st: ConnState, write: (buf: Uint8Array, off: number, len: number) => number, more: () => boolean): "full" | "broken" | "limit" | "more" {
    const pre = this.spec.preamble;
    while (pre && st.pre > 0) {
      const n = write(pre, pre.byteLength - st.pre, st.pre);
      if (n < 0) return this.broken(st, n);
      if (n === 0) return "full";
      st.pre -= n;
    }
    const { c, o } = this.ctx;
    const buf = this.buf;
    const size = buf.byteLength;
    const limit = this.spec.limitBytes;
    while (this.running) {
      const len = limit > 0 ? Math.min(size - st.off, limit - c[o + Slot.bytes]!) : size - st.off;
      if (st.off === 0) this.starting(st);
      const n = write(buf, st.off, len);
      if (n < 0) return this.broken(st, n);
      if (n > 0) {
        c[o + Slot.bytes]! += n;
        c[o + Slot.packets]!++;
        st.off += n;
        if (st.off >= size) this.written(st);
      }
      if (limit > 0 && c[o + Slot.bytes]! >= limit) return "limit";
      if (n < len || !more()) return n < len ? "full" : "more";
    }
    return "more";
  }

  private broken(st: ConnState, n: number): "broken" {
    st.broke ??= new SyscallError("send", -n);
    return "broken";
  }

  /** The byte limit (-n) is reached: the stream ends. */
  private reachedLimit(): void {
    this.ctx.touch();
    this.reason = "limit";
    // A stream that also reads is not done before the peer's EOF: its `received` is still growing.
    if (!this.spec.countReceived) this.ctx.end("limit");
    void this.stop();
  }

  /**
   * Beside other bulk streams on this Worker, the connections are written by the Worker's poll group (PollGroup) until
   * they break, the stream stops, or a stream of another kind arrives: then they go back to the event loop.
   */
  private joinGroup(conns: { fd: number; st: ConnState }[]): boolean {
    const { pollGroup: group, io } = this.env;
    if (!group?.open || !io) return false;
    for (const { fd, st } of conns) {
      const write = (buf: Uint8Array, off: number, len: number) => {
        const n = io.send(fd, off === 0 && len === buf.byteLength ? buf : buf.subarray(off, off + len), len);
        return sendResult(n);
      };
      let calls = 0;
      const member: GroupMember = {
        fd,
        events: POLLOUT,
        wants: () => this.running,
        ready: () => {
          calls = 0;
          const r = this.writeRun(st, write, () => ++calls < CALLS_IN_A_ROW);
          this.ctx.touch();
          if (r === "limit") this.reachedLimit();
          if (r !== "broken") return 0;
          this.grouped.delete(member);
          group.drop(member);
          io.close(fd);
          this.closedState(st, this.conns);
          return -1;
        },
        back: () => {
          this.grouped.delete(member);
          this.backToLoop(fd, st)
            .then((s) => this.pump(s))
            .catch((e: unknown) => this.ctx.end("error", e));
        },
      };
      this.grouped.set(member, st);
      group.add(member);
    }
    return true;
  }

  /** A connection the poll group served, back in Bun's event loop with its state. */
  private async backToLoop(fd: number, st: ConnState): Promise<TcpSocket<ConnState>> {
    const s = await this.env.net.connect({ fd, data: st, socket: this.handlers!, allowHalfOpen: this.halfOpen });
    this.socks.push(s);
    return s;
  }

  /** A payload's first byte is about to go: with timeCalls its write is timed from here, with stampWrites it is stamped. */
  private starting(st: ConnState): void {
    if (this.spec.timeCalls) st.writeAt ??= nowMs();
    if (this.stamper && !st.stamped) {
      this.stamper.stamp();
      st.stamped = true;
    }
  }

  /** A whole payload is written: the next starts at its beginning, and with timeCalls the write is timed. */
  private written(st: ConnState): void {
    st.off = 0;
    st.stamped = false;
    if (st.writeAt === undefined) return;
    this.ctx.latency((nowMs() - st.writeAt) * 1000);
    st.writeAt = undefined;
  }

  /** The peer reset or closed: as the event-loop socket's close. */
  private blockingBroken(b: BlockingSocket<ConnState>): void {
    this.blocking = undefined;
    b.close();
    this.closedState(b.data, 1);
  }

  private async unblock(b: BlockingSocket<ConnState>): Promise<void> {
    this.blocking = undefined;
    try {
      const s = await b.release(this.env, this.handlers!);
      this.socks[0] = s;
      this.pump(s);
    } catch (e) {
      this.ctx.end("error", e);
    }
  }

  /** Stop in blocking mode: FIN, and with fin-wait-eof read to the peer's EOF (bounded), then close. */
  private async stopBlocking(b: BlockingSocket<ConnState>): Promise<void> {
    this.blocking = undefined;
    if (!b.data.closed && this.spec.end === "fin-wait-eof") {
      b.shutdownWrite();
      await b.readUntil(new Uint8Array(64 * 1024), () => {}, () => false, 10_000);
    }
    b.close();
    if (!b.data.closed) this.closedState(b.data, 1);
    this.ctx.end(this.reason);
  }

  /**
   * One write per socket per event-loop turn. It keeps what is in flight near one write (128 KiB), so on loopback the
   * receiver's copy finds the bytes still in cache: with both ends on one Worker, 2 streams went from 45–68 Gbit/s
   * (bimodal, the queues grown to 0.5 ms of data) at up to 256 writes per turn to 104 Gbit/s, 4 streams from 60 to
   * 101, and `iperf3 -c -P 4` into stock iperf3 -s from 26 to 28–30. No socket that never fills starves the others
   * or the stop message either.
   */
  private pump(s: TcpSocket<ConnState>): void {
    if (!this.running || s.data.closed) return;
    const st = s.data;
    const pre = this.spec.preamble;
    while (pre && st.pre > 0) {
      const n = s.write(pre, pre.byteLength - st.pre, st.pre);
      if (n <= 0) return;
      st.pre -= n;
    }
    if (this.frames) return this.pumpFrame(s);
    const { c, o } = this.ctx;
    const buf = this.buf;
    const size = buf.byteLength;
    const limit = this.spec.limitBytes;
    let len = size - st.off;
    if (limit > 0) len = Math.min(len, limit - c[o + Slot.bytes]!);
    if (this.pacer) {
      const t = nowMs();
      const allowed = this.pacer.allowance(t, len);
      if (allowed <= 0) return this.wait(t);
      len = Math.min(len, allowed);
    }
    if (st.off === 0) this.starting(st);
    const n = st.off || len < size ? s.write(buf, st.off, len) : s.write(buf);
    if (n < 0) return;
    if (n > 0) {
      c[o + Slot.bytes]! += n;
      c[o + Slot.packets]!++;
      this.pacer?.consume(n, 1);
      st.off += n;
      if (st.off >= size) this.written(st);
    }
    if (limit > 0 && c[o + Slot.bytes]! >= limit) return this.reachedLimit();
    if (n < len) return; // kernel buffer full: drain calls us again
    this.ctx.touch();
    setImmediate(() => this.pump(s));
  }

  /**
   * Frames (one connection): each at its slot, as writes of at most the payload's size, the first stamped with the
   * frame's id and size and the rest the same buffer again (iperf 2 writes its buffer, header and all, each time).
   */
  private pumpFrame(s: TcpSocket<ConnState>): void {
    const fr = this.frames!;
    const st = s.data;
    const { c, o } = this.ctx;
    const limit = this.spec.limitBytes;
    if (!fr.frame) {
      const next = fr.schedule.next();
      if (!next) return;
      // The first frame's head went out before the hand-off (spec.frameHead): its size stands, its rest is ours.
      const head = next.id === 1 ? this.spec.frameHead : undefined;
      fr.frame = head ? { ...next, size: head.frameSize } : next;
      fr.left = fr.frame.size;
      fr.chunk = 0;
      st.off = 0;
      st.stamped = false;
      if (head) {
        fr.chunk = Math.min(fr.left, this.buf.byteLength);
        st.off = head.bytes;
        fr.left -= head.bytes;
      }
    }
    const frame = fr.frame;
    if (!st.stamped) {
      if (nowMs() < frame.atMs) return runAt(frame.atMs, () => this.pump(s), (t) => (this.waitTimer = t));
      this.stamper?.stamp(frame);
      st.stamped = true;
    }
    for (;;) {
      if (fr.chunk === 0) fr.chunk = Math.min(fr.left, this.buf.byteLength);
      let len = fr.chunk - st.off;
      if (limit > 0) len = Math.min(len, limit - c[o + Slot.bytes]!);
      const n = s.write(this.buf, st.off, len);
      if (n < 0) return;
      c[o + Slot.bytes]! += n;
      st.off += n;
      fr.left -= n;
      if (st.off >= fr.chunk) {
        c[o + Slot.packets]!++;
        st.off = 0;
        fr.chunk = 0;
      }
      if (limit > 0 && c[o + Slot.bytes]! >= limit) return this.reachedLimit();
      if (n < len) return; // kernel buffer full: drain calls us again
      if (fr.left <= 0) break;
    }
    fr.schedule.sent();
    fr.frame = undefined;
    this.ctx.touch();
    setImmediate(() => this.pump(s));
  }

  private wait(t: number): void {
    if (this.waitTimer) return;
    const ms = Math.max(0, this.pacer!.waitMs(t, this.buf.byteLength));
    this.waitTimer = setTimeout(() => {
      this.waitTimer = undefined;
      for (const s of this.socks) this.pump(s);
    }, ms);
  }

  /**
   * Pure senders whose peer is to close only after our FIN (iperf 2, netperf): their sockets stay open at the peer's
   * FIN, so a peer gone mid-test is met by our next writes, with the errno the C tools' writers print ("write failed:
   * Broken pipe"), not a quiet close. A stream that also reads (full duplex) ends at the peer's FIN instead: that FIN is
   * how an unlimited full-duplex sender learns the test is over, and closing then keeps both ends' counts equal.
   */
  private get halfOpen(): boolean {
    return this.spec.end === "fin-wait-eof" && !this.spec.countReceived;
  }

  /** The peer's FIN. Once our own FIN is out (or nothing more is to be written) the exchange is over: close. */
  private peerEnded(s: TcpSocket<ConnState>): void {
    s.data.eof = true;
    if (this.stopping || !this.running) s.terminate();
  }

  private closed(s: TcpSocket<ConnState>, err?: Error): void {
    if (s.data.detached) return;
    if (err) s.data.broke ??= err;
    this.closedState(s.data, this.conns);
  }

  private closedState(st: ConnState, of: number): void {
    if (st.closed) return;
    st.closed = true;
    this.closedCount++;
    this.ctx.c[this.ctx.o + Slot.closed]!++;
    if (this.closedCount === of) {
      this.onAllClosed?.();
      // The peer's end, with what broke the connection when it was not a FIN.
      if (!this.stopping) this.ctx.end("eof", st.broke);
    }
  }

  pause(): void {
    this.running = false;
    if (this.waitTimer) clearTimeout(this.waitTimer);
  }

  stop(): Promise<void> {
    this.pause();
    if (this.stopping) return Promise.resolve();
    this.stopping = true;
    if (this.blocking) return this.stopBlocking(this.blocking);
    return this.grouped.size > 0 ? this.ungroup().then(() => this.stopSockets()) : this.stopSockets();
  }

  /** Stop with connections in the poll group: they end through the event loop, as every other does. */
  private async ungroup(): Promise<void> {
    const members = [...this.grouped];
    this.grouped.clear();
    for (const [m] of members) this.env.pollGroup?.drop(m);
    await Promise.all(members.map(([m, st]) => this.backToLoop(m.fd, st)));
  }

  private stopSockets(): Promise<void> {
    const open = this.socks.filter((s) => !s.data.closed);
    if (open.length === 0) {
      this.ctx.end(this.reason);
      return Promise.resolve();
    }
    // A socket that also reads keeps reading until the peer's EOF, whatever the end mode.
    const half = this.spec.end === "fin-wait-eof" || this.spec.countReceived;
    return new Promise<void>((resolve) => {
      const finish = () => {
        clearTimeout(deadline);
        this.ctx.end(this.reason);
        resolve();
      };
      // A peer that never closes its side must not hold us: terminate after the deadline.
      const deadline = setTimeout(() => {
        for (const s of this.socks) if (!s.data.closed) s.terminate();
        finish();
      }, half ? 10_000 : 2_000);
      this.onAllClosed = finish;
      for (const s of open) {
        if (!half) {
          s.end();
          continue;
        }
        halfClose(this.env, s);
        // The peer's FIN came already: no EOF is left to wait for.
        if (s.data.eof) s.terminate();
      }
    });
  }
}
