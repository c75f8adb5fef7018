import type { TcpHandlers, TcpSocket } from "../net/types.ts";
import { notNow, sendResult, type BlockingIo } from "../sockopt/blocking-io.ts";
import type { Sockopt } from "../sockopt/sockopt.ts";
import type { RrLoops } from "../sockopt/rr-loops.ts";
import { nowMs } from "./context.ts";
import type { WorkerEnv } from "./sockets.ts";

/** Longest a blocking read waits before the Worker gets its event loop back (stop, idle checks, other streams). */
export const WAIT_MS = 20;
/** Longest a run of transactions keeps the event loop away while data keeps coming. */
export const SLICE_MS = 10;

export type ReadResult = "data" | "timeout" | "eof" | "error";
/** How readUntil ended: the peer's EOF or a broken connection, the caller's condition, or the time limit. */
export type UntilResult = "eof" | "error" | "done" | "deadline";

/**
 * A connected TCP socket taken out of Bun's event loop into blocking mode, for a stream that has its Worker to
 * itself (request/response, bulk send or receive): each transaction, write or read is one system call, as in the C
 * tools' loops, instead of an epoll wake-up and a JS callback. It goes back to Bun (`release`) as soon as another stream shares the Worker.
 */
export class BlockingSocket<T> {
  private open = true;
  private constructor(readonly fd: number, readonly data: T, private readonly io: BlockingIo, private readonly sockopt: Sockopt) {}

  /**
   * Takes `s` from Bun when this runtime can (Bun on Linux glibc) and the stream is alone on its Worker; otherwise
   * undefined and `s` is untouched. `detach` is called first so the Bun socket's close callback can tell this
   * hand-over from a peer's close.
   */
  static take<T>(env: WorkerEnv, s: TcpSocket<T>, detach: () => void): BlockingSocket<T> | undefined {
    const { io, sockopt } = env;
    if (!io || !sockopt || env.streamsHere() !== 1 || s.fd === undefined || s.fd < 0) return undefined;
    const data = s.data;
    detach();
    const [fd] = sockopt.handOff(s);
    io.makeBlocking(fd!, WAIT_MS);
    return new BlockingSocket(fd!, data, io, sockopt);
  }

  /** A connection that is blocking and bounded already (accepted from BlockingIo.listen's listener). */
  static adopt<T>(env: WorkerEnv, fd: number, data: T): BlockingSocket<T> {
    return new BlockingSocket(fd, data, env.io!, env.sockopt!);
  }

  get closed(): boolean {
    return !this.open;
  }

  /** The TCP_RR loops in C (rr-loops.c), where bun:ffi's cc is there: one call per slice of transactions. */
  loops(): RrLoops | undefined {
    return this.io.loops();
  }

  /** Bytes the kernel took (the whole buffer unless the peer stopped reading for WAIT_MS), -errno once broken. */
  write(buf: Uint8Array, offset = 0, length = buf.byteLength - offset): number {
    const n = this.io.send(this.fd, offset === 0 && length === buf.byteLength ? buf : buf.subarray(offset, offset + length), length);
    return sendResult(n);
  }

  /**
   * Reads into `buf` and hands each chunk to `onData` until this slice is used up, nothing came for WAIT_MS, the
   * peer closed, or `more()` says stop. Returns why it stopped.
   *
   * The clock is read every `clockEvery` reads. A look costs about 1.5 % of a pinned TCP_RR 1,1 transaction, so a
   * caller with nothing else to time passes more than 1; the price is a slice that can overrun SLICE_MS by up to
   * that many waits (≤ WAIT_MS each) against a peer that paces just under WAIT_MS.
   */
  readSlice(buf: Uint8Array, onData: (n: number) => void, more: () => boolean, clockEvery = 1): ReadResult | "slice" {
    const end = nowMs() + SLICE_MS;
    for (let reads = 1; more(); reads++) {
      const r = this.readOnce(buf, onData);
      if (r !== "data") return r;
      if (reads % clockEvery === 0 && nowMs() > end) return "slice";
    }
    return "slice";
  }

  readOnce(buf: Uint8Array, onData: (n: number) => void): ReadResult {
    return this.readResult(this.io.recv(this.fd, buf, buf.byteLength), onData);
  }

  /** What a read that returned `n` (bytes, 0 at EOF, or -errno) means; its bytes go to `onData`. */
  readResult(n: number, onData: (n: number) => void): ReadResult {
    if (n > 0) {
      onData(n);
      return "data";
    }
    if (n === 0) return "eof";
    return notNow(n) ? "timeout" : "error";
  }

  /**
   * Reads, yielding to the event loop between reads, until `done()`, the peer's EOF or a broken connection, for at
   * most `ms` (the end of a test: the last answers, then the peer's FIN).
   */
  async readUntil(buf: Uint8Array, onData: (n: number) => void, done: () => boolean, ms: number): Promise<UntilResult> {
    for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setImmediate(r))) {
      if (done()) return "done";
      const r = this.readOnce(buf, onData);
      if (r === "eof" || r === "error") return r;
    }
    return done() ? "done" : "deadline";
  }

  shutdownWrite(): void {
    try {
      this.sockopt.shutdownWrite(this.fd);
    } catch {
      // the peer already closed: nothing left to tell it
    }
  }

  /** Our close after the last response (TCP_CRR's server): the FIN follows the bytes already written. */
  end(): void {
    this.close();
  }

  close(): void {
    if (!this.open) return;
    this.open = false;
    this.io.close(this.fd);
  }

  /**
   * Back to the event loop as one of a listening stream's accepted connections, into `socks`. `open` is left out: it
   * ran (counted and set up the connection) when it was accepted.
   */
  async rejoin(env: WorkerEnv, handlers: TcpHandlers<T>, socks: Set<TcpSocket<T>>): Promise<void> {
    const { open: _ranAtAccept, ...rest } = handlers;
    socks.add(await this.release(env, rest));
  }

  /** Back to Bun's event loop with the same connection state, when another stream needs this Worker. */
  async release(env: WorkerEnv, handlers: TcpHandlers<T>): Promise<TcpSocket<T>> {
    this.open = false;
    this.sockopt.setNonBlocking(this.fd, true);
    return env.net.connect({ fd: this.fd, data: this.data, socket: handlers });
  }
}

/** What a listening stream supplies to have its one accepted connection served in blocking mode. */
export interface AcceptedHooks<T> {
  readonly env: WorkerEnv;
  /** The stream's event-loop handlers and sockets, for the way back. */
  readonly handlers: TcpHandlers<T>;
  readonly socks: Set<TcpSocket<T>>;
  /** One slice of work on `b`, usually through its readSlice: why it stopped. */
  readonly slice: (b: BlockingSocket<T>) => ReadResult | "slice";
  readonly stopped: () => boolean;
  /** The peer closed or the connection broke; its fd is closed already. */
  readonly peerClosed: (data: T) => void;
  /** Beside other streams, hands the connection to the Worker's poll group instead of the event loop: whether it did. */
  readonly regroup?: (b: BlockingSocket<T>) => boolean;
  readonly failed: (e: unknown) => void;
}

/**
 * A listening stream's only accepted connection, served in blocking mode slice by slice until the peer closes, the
 * stream stops, or the Worker or the stream gets another socket: then it rejoins the event loop with its state.
 */
export class BlockingAccepted<T> {
  /** The connection while it is served here (for stop and TCP_INFO). */
  socket: BlockingSocket<T> | undefined;
  constructor(private readonly h: AcceptedHooks<T>) {}

  /** Takes `s` when it is the stream's only socket and the stream is alone on its Worker; `detach` as in take(). */
  take(s: TcpSocket<T>, detach: () => void): void {
    if (this.socket || this.h.socks.size !== 1) return;
    const b = BlockingSocket.take(this.h.env, s, detach);
    if (!b) return;
    this.h.socks.delete(s);
    this.socket = b;
    this.slice();
  }

  private readonly slice = (): void => {
    const { h } = this;
    const b = this.socket;
    if (!b || h.stopped()) return;
    const r = h.slice(b);
    if (r === "eof" || r === "error") {
      this.socket = undefined;
      b.close();
      return h.peerClosed(b.data);
    }
    if (h.stopped()) return;
    if (h.env.streamsHere() > 1 || h.socks.size > 0) {
      this.socket = undefined;
      if (h.socks.size === 0 && h.regroup?.(b)) return;
      b.rejoin(h.env, h.handlers, h.socks).catch(h.failed);
      return;
    }
    yieldThen(this.slice);
  };
}

/** Runs `step` again after the Worker's pending messages and timers had their turn. */
export const yieldThen = (step: () => void): void => {
  setImmediate(step);
};
