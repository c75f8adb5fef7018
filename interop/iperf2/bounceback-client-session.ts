import { z } from "zod";
import { FixedFramer } from "../../lib/fixed-framer.ts";
import { BB_MANDATORY, BB_MAX_SIZE, type BbStamp, checkBouncebackReply, encodeBouncebackRequest } from "./bounceback.ts";
import type { StreamTransport } from "./transport.ts";
import { Iperf2WireError } from "./wire-error.ts";

/** What a `--bounceback` client asks for, in the request's terms (sizes in bytes, hold in µs, period in ms). */
export const BouncebackClientOptions = z.object({
  size: z.number().int().min(BB_MANDATORY).max(BB_MAX_SIZE),
  replySize: z.number().int().min(BB_MANDATORY).max(BB_MAX_SIZE),
  /** Requests per period, one after the other's reply (`--bounceback=N`, 10 by default). */
  burst: z.number().int().min(1).max(1_000_000),
  /** `--bounceback-period` in ms; 0: the next request as soon as the reply is in (no bursts). */
  periodMs: z.number().min(0),
  holdUs: z.number().int().min(0).max(0xffffffff),
  quickAck: z.boolean(),
  tos: z.number().int().min(0).max(255),
  /** -t in ms: no burst starts at or after it (a tick on the end would race the stop); 0: until stop(). */
  durationMs: z.number().min(0),
});
export type BouncebackClientOptions = z.infer<typeof BouncebackClientOptions>;

export interface BouncebackClientClock {
  /** Monotonic milliseconds: both ends of a round trip are read from it. */
  nowMs(): number;
  /** Wall clock, stamped into each request for the server (trip times compare it with the server's own). */
  wall(): BbStamp;
  /** Runs `fn` at the monotonic instant `atMs`; returns its cancel. */
  at(atMs: number, fn: () => void): () => void;
}

export interface BouncebackClientEvents {
  /** A request went out (the glue re-arms TCP_QUICKACK here, which the kernel clears by itself). */
  sent(bytes: number): void;
  /** A whole reply came back: its round trip, measured from our write to its last byte. */
  roundTrip(seconds: number, sent: number, received: number): void;
  /** The server closed (after our FIN, or on its own). */
  closed(): void;
  error(e: Iperf2WireError): void;
}

/**
 * Client side of `--bounceback` (docs/protocols/iperf2.md §2.8), as 2.1.8's client runs it: no client header; at
 * each period tick a burst of requests, each written once the previous reply is whole, and a burst whose period ran
 * out gives up its remaining requests; the next burst waits for the next tick. Each reply is framed by the reply
 * size and must be a bounceback block. stop() ends with our FIN (stock writes no stop message), and what arrives after
 * it is not counted, as the stock client stops reading there.
 */
export class BouncebackClientSession {
  /** Bytes of whole round trips, each way. */
  sent = 0;
  received = 0;
  roundTrips = 0;
  private readonly replies: FixedFramer;
  private startMs = 0;
  private burstId = 0;
  private left = 0;
  /** When the request in flight was written; null when none is. */
  private sentAtMs: number | null = null;
  private cancelTick: (() => void) | undefined;
  private stopped = false;
  private closed = false;

  constructor(
    private readonly transport: StreamTransport,
    private readonly clock: BouncebackClientClock,
    private readonly o: BouncebackClientOptions,
    private readonly events: BouncebackClientEvents,
  ) {
    this.replies = new FixedFramer(o.replySize);
  }

  /** The first burst goes out now; period ticks count from here. */
  start(): void {
    this.startMs = this.clock.nowMs();
    this.burst(1);
  }

  onData(chunk: Uint8Array): void {
    if (this.stopped || this.closed) return;
    try {
      for (const reply of this.replies.push(chunk)) {
        if (this.stopped) return;
        this.complete(reply);
      }
      if (this.replies.pending > 0 && this.sentAtMs === null) throw this.unasked();
    } catch (e) {
      if (!(e instanceof Iperf2WireError)) throw e;
      this.stop();
      this.events.error(e);
    }
  }

  private unasked(): Iperf2WireError {
    return new Iperf2WireError("bad-length", "the server sent bytes no request asked for");
  }

  onEof(): void {
    if (this.closed) return;
    this.closed = true;
    this.stopped = true;
    this.cancelTick?.();
    this.events.closed();
  }

  /** Time is up (or the user stopped): no more requests, and our FIN goes out. Idempotent. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.cancelTick?.();
    this.transport.end();
  }

  private burst(id: number): void {
    this.cancelTick = undefined;
    if (this.stopped || (this.o.durationMs > 0 && (id - 1) * this.o.periodMs >= this.o.durationMs && this.o.periodMs > 0)) return;
    this.burstId = id;
    this.left = this.o.burst;
    this.request();
  }

  private request(): void {
    this.left--;
    const bytes = encodeBouncebackRequest({ ...this.o, burstId: this.burstId, clientTx: this.clock.wall() });
    this.sentAtMs = this.clock.nowMs();
    this.transport.write(bytes);
    this.events.sent(bytes.length);
  }

  private complete(reply: Uint8Array): void {
    if (this.sentAtMs === null) throw this.unasked();
    const now = this.clock.nowMs();
    checkBouncebackReply(reply, this.o.size);
    const seconds = (now - this.sentAtMs) / 1000;
    this.sentAtMs = null;
    this.sent += this.o.size;
    this.received += this.o.replySize;
    this.roundTrips++;
    this.events.roundTrip(seconds, this.o.size, this.o.replySize);
    if (this.stopped) return;
    if (this.o.periodMs === 0) return this.burst(this.burstId + 1);
    // Never before the burst's own tick: a timer may fire a fraction of a millisecond early, and a reply read then
    // would otherwise schedule this same burst again.
    const tick = Math.max(this.burstId - 1, Math.floor((now - this.startMs) / this.o.periodMs));
    if (this.left > 0 && tick === this.burstId - 1) return this.request();
    const next = tick + 1;
    this.cancelTick = this.clock.at(this.startMs + next * this.o.periodMs, () => this.burst(next + 1));
  }
}
