import { HIST_BUCKETS, SLOTS_PER_STREAM, Slot } from "../counters.ts";
import { timeEvent } from "../timed-event.ts";
import type { EndReason, FromWorker, SocketBufferSizes } from "./messages.ts";
import type { Endpoint } from "../stream-spec.ts";
import type { TcpInfo } from "../sockopt/tcp-info.ts";

export const nowMs = () => performance.now();
/** Microseconds on a wall clock, for datagram stamps the peer compares (only differences matter). */
export const wallUs = () => (performance.timeOrigin + performance.now()) * 1000;

/** One stream's window onto the shared counters, and its way to talk to the main thread. */
export class StreamContext {
  readonly c: Float64Array;
  readonly o: number;
  readonly hist: Uint32Array;
  private done = false;
  constructor(
    readonly plane: number,
    readonly stream: number,
    counters: SharedArrayBuffer,
    histograms: SharedArrayBuffer,
    private readonly post: (m: FromWorker) => void,
  ) {
    this.c = new Float64Array(counters);
    this.o = stream * SLOTS_PER_STREAM;
    this.hist = new Uint32Array(histograms, stream * HIST_BUCKETS * 4, HIST_BUCKETS);
    this.c[this.o + Slot.lastActivityMs] = nowMs();
  }
  /** After a failed open the main thread already knows; the clean-up must not report a second ending. */
  silence(): void {
    this.done = true;
  }
  get ended(): boolean {
    return this.done;
  }
  /** Set by the Worker loop: a stream that ends by itself (EOF, limit, marker) still holds sockets to release. */
  onEnd: (() => void) | undefined;

  end(reason: EndReason, err?: unknown): void {
    if (this.done) return;
    this.done = true;
    const error = err === undefined ? undefined : { message: err instanceof Error ? err.message : String(err), code: (err as { code?: string }).code };
    this.post({ t: "ended", plane: this.plane, stream: this.stream, reason, error });
    this.onEnd?.();
  }
  event(name: "datagram" | "fin" | "connected", bytes?: Uint8Array, from?: Endpoint): void {
    this.post({ t: "event", plane: this.plane, stream: this.stream, name, bytes, from });
  }
  tcpInfo(info: TcpInfo, buffers?: SocketBufferSizes): void {
    this.post({ t: "tcp-info", plane: this.plane, stream: this.stream, info, buffers });
  }
  socketBuffers(buffers: SocketBufferSizes | undefined): void {
    if (buffers) this.post({ t: "buffers", plane: this.plane, stream: this.stream, buffers });
  }
  /** A line for the main thread's stderr (refusals, warnings that do not end the stream). */
  log(message: string): void {
    this.post({ t: "log", message });
  }
  /** One timed event (a transaction, a timed call, a burst) of `us` microseconds (src/timed-event.ts). */
  latency(us: number): void {
    timeEvent(this.c, this.o, this.hist, us);
  }
  touch(): void {
    this.c[this.o + Slot.lastActivityMs] = nowMs();
  }
  idleForMs(): number {
    return nowMs() - this.c[this.o + Slot.lastActivityMs]!;
  }
}

/** What every runner offers the worker loop. */
export interface Runner {
  /** `fd`: the stream's socket, as the process numbers it (iperf 2 -e lines print it as "(sock=N)"). */
  open(): Promise<{ localPort?: number; fd?: number }>;
  go(): void;
  stop(): Promise<void>;
  /** A sender writes no more; its sockets stay open until stop (the peer sees no close). */
  pause?(): void;
  send?(bytes: Uint8Array, to?: Endpoint): void;
  /** fds of the stream's open TCP sockets, for TCP_INFO sampling. */
  tcpFds?(): number[];
}

/** fds of the open sockets among `socks` (Bun reports -1 or nothing once a socket is gone). */
export function openFds(socks: Iterable<{ fd?: number; data: { closed: boolean } | undefined }>): number[] {
  const out: number[] = [];
  for (const s of socks) if (s.data && !s.data.closed && s.fd !== undefined && s.fd >= 0) out.push(s.fd);
  return out;
}
