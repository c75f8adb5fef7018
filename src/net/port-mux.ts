import { concatBytes } from "../../lib/bytes.ts";
import type { Net, TcpHandlers, TcpListener, TcpSocket } from "./types.ts";

/**
 * One TCP port shared by several servers that cannot be told apart at accept: the mux accepts, holds each connection
 * until what its client sent first names the server it is for, then opens it in that server's handlers as if that
 * server had accepted it, bytes read so far included. Each server listens through `net(route)`, a Net whose listen()
 * registers its handlers here instead of binding the port. A connection that stays silent is decided (or closed)
 * when its hold ends.
 */

/** The route for a connection, "wait" for more bytes, or "drop". `timedOut`: the hold ended with what came so far. */
export type Decide<R extends string> = (first: Uint8Array, peer: string | undefined, timedOut: boolean) => R | "wait" | "drop";

interface Held {
  chunks: Uint8Array[];
  length: number;
  timer: ReturnType<typeof setTimeout>;
}

/** A held connection is decided on what it has after this long. */
export const HOLD_MS = 10_000;
/** Bytes held at most: a decider that wants more than this gets its answer forced (timedOut). */
const MAX_HELD = 4096;

export class PortMux<R extends string> {
  private listener: TcpListener | undefined;
  private readonly routes = new Map<R, { handlers: TcpHandlers<unknown>; data: unknown }>();
  private readonly held = new Map<TcpSocket<unknown>, Held>();
  private readonly routed = new WeakMap<TcpSocket<unknown>, R>();

  constructor(
    private readonly real: Net,
    private readonly decide: Decide<R>,
    private readonly holdMs = HOLD_MS,
  ) {}

  /** Binds the port (its errors are the caller's: EADDRINUSE and so on). */
  listen(hostname: string, port: number): void {
    this.listener = this.real.listen<unknown>({
      hostname,
      port,
      data: undefined,
      socket: {
        open: (s) => this.hold(s),
        data: (s, d) => this.onData(s, d),
        drain: (s) => this.to(s)?.drain?.(s),
        end: (s) => {
          // A client that half-closes before a decision gets one on what it sent (or is closed), not a hold.
          if (!this.routed.has(s)) this.settle(s, true);
          if (this.routed.has(s)) this.to(s)?.end?.(s);
        },
        close: (s, e) => (this.routed.has(s) ? this.to(s)?.close?.(s, e) : this.forget(s)),
        error: (s, e) => this.to(s)?.error?.(s, e),
      },
    });
  }

  get port(): number {
    return this.listener?.port ?? 0;
  }

  /** The Net one server listens through: its listen() takes this port's connections of `route`. */
  net(route: R): Net {
    return {
      connect: (o) => this.real.connect(o),
      udpSocket: (o) => this.real.udpSocket(o),
      listen: <T>(o: { data: T; socket: TcpHandlers<T> }): TcpListener => {
        this.routes.set(route, { handlers: o.socket as TcpHandlers<unknown>, data: o.data });
        const mux = this;
        return {
          get port() {
            return mux.port;
          },
          stop: () => void this.routes.delete(route),
        };
      },
    };
  }

  stop(): void {
    this.listener?.stop(true);
    this.listener = undefined;
    for (const [s, h] of this.held) {
      clearTimeout(h.timer);
      s.terminate();
    }
    this.held.clear();
  }

  private to(s: TcpSocket<unknown>): TcpHandlers<unknown> | undefined {
    const r = this.routed.get(s);
    return r === undefined ? undefined : this.routes.get(r)?.handlers;
  }

  private hold(s: TcpSocket<unknown>): void {
    const h: Held = { chunks: [], length: 0, timer: setTimeout(() => this.settle(s, true), this.holdMs) };
    this.held.set(s, h);
    this.settle(s, false);
  }

  private onData(s: TcpSocket<unknown>, d: Uint8Array): void {
    if (this.routed.has(s)) return void this.to(s)?.data?.(s, d);
    const h = this.held.get(s);
    if (!h) return;
    h.chunks.push(d.slice());
    h.length += d.length;
    this.settle(s, h.length >= MAX_HELD);
  }

  private settle(s: TcpSocket<unknown>, timedOut: boolean): void {
    const h = this.held.get(s);
    if (!h) return;
    const verdict = this.decide(concatBytes(h.chunks), s.remoteAddress, timedOut);
    if (verdict === "wait" && !timedOut) return;
    if (verdict === "wait" || verdict === "drop" || !this.routes.has(verdict)) {
      this.forget(s);
      s.terminate();
      return;
    }
    this.open(s, verdict);
  }

  private forget(s: TcpSocket<unknown>): void {
    const h = this.held.get(s);
    if (h) clearTimeout(h.timer);
    this.held.delete(s);
  }

  /** The route's server sees an accept, then the bytes that came before it. */
  private open(s: TcpSocket<unknown>, route: R): void {
    const h = this.held.get(s)!;
    this.forget(s);
    const r = this.routes.get(route);
    if (!r) return void s.terminate();
    this.routed.set(s, route);
    s.data = r.data !== null && typeof r.data === "object" ? { ...r.data } : r.data;
    r.handlers.open?.(s);
    if (h.length > 0) r.handlers.data?.(s, concatBytes(h.chunks));
  }
}
