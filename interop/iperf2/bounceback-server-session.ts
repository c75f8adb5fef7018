import { BB_FLAG, type BbStamp, type BouncebackHeader, bouncebackSize, decodeBounceback, encodeBouncebackReply } from "./bounceback.ts";
import { hasFlag } from "./flags.ts";
import type { StreamTransport } from "./transport.ts";
import { Iperf2WireError } from "./wire-error.ts";
import { put32, u16 } from "./words.ts";

/** Wall-clock stamps (the client compares them with its own) and the hold between a read and its reply. */
export interface BouncebackClock {
  now(): BbStamp;
  after(us: number, fn: () => void): void;
}

export interface BouncebackEvents {
  /** The first request is decoded: its sizes, hold and flags hold for the whole test. */
  started(h: BouncebackHeader): void;
  /** A reply went out (the glue re-arms TCP_QUICKACK here when the client asked for it). */
  replied(): void;
  /** The test is over (client EOF or its stop message); the connection was closed. */
  end(received: number, written: number, requests: number): void;
  error(e: Iperf2WireError): void;
}

/**
 * Server side of a `--bounceback` connection: collects each request (framed by the first request's size, as stock
 * servers do), stamps its arrival, waits the client's hold, stamps the send and writes the reply. A stop message or
 * the client's EOF ends the test and closes at once (the client waits for that close before it prints).
 */
export class BouncebackServerSession {
  /** Bytes taken as requests: what follows a stop message is not read. */
  received = 0;
  written = 0;
  requests = 0;
  private header: BouncebackHeader | null = null;
  private readonly head = new Uint8Array(8);
  private buf: Uint8Array | null = null;
  private fill = 0;
  private closed = false;
  /** Our side ended the test (a server limit): requests still arriving are read and dropped until the client's EOF. */
  private stopped = false;

  constructor(
    private readonly transport: StreamTransport,
    private readonly clock: BouncebackClock,
    private readonly events: BouncebackEvents,
  ) {}

  onData(chunk: Uint8Array): void {
    if (this.closed || this.stopped) return;
    try {
      let at = 0;
      while (at < chunk.length && !this.closed) {
        if (this.buf === null) {
          const n = Math.min(this.head.length - this.fill, chunk.length - at);
          this.head.set(chunk.subarray(at, at + n), this.fill);
          this.fill += n;
          at += n;
          this.received += n;
          if (this.fill < this.head.length) return;
          this.buf = new Uint8Array(bouncebackSize(this.head));
          this.buf.set(this.head);
          continue;
        }
        const n = Math.min(this.buf.length - this.fill, chunk.length - at);
        this.buf.set(chunk.subarray(at, at + n), this.fill);
        this.fill += n;
        at += n;
        this.received += n;
        if (this.fill === this.buf.length) this.complete(this.buf);
      }
    } catch (e) {
      if (!(e instanceof Iperf2WireError)) throw e;
      this.closed = true;
      this.transport.close();
      this.events.error(e);
    }
  }

  onEof(): void {
    this.finish();
  }

  /**
   * Ends the test from our side without a reply more. The glue half-closes: a stock client reads EOF and ends its test
   * cleanly, where a close with its next request unread would reset the connection, and 2.1.8 and 2.2.1 clients may
   * then hang on a reset read. The client's own close ends the session as usual.
   */
  stop(): void {
    this.stopped = true;
  }

  private complete(request: Uint8Array): void {
    this.fill = 0;
    const rx = this.clock.now();
    if (this.header === null) {
      this.header = decodeBounceback(request);
      this.events.started(this.header);
    }
    if (hasFlag(u16(request, 12), BB_FLAG.stop)) return this.finish();
    this.requests++;
    const reply = encodeBouncebackReply(request, this.header.replySize, rx, rx);
    if (this.header.holdUs > 0) this.clock.after(this.header.holdUs, () => this.send(reply));
    else this.send(reply);
  }

  private send(reply: Uint8Array): void {
    if (this.closed || this.stopped) return;
    const tx = this.clock.now();
    put32(reply, 36, tx.sec);
    put32(reply, 40, tx.usec);
    this.transport.write(reply);
    this.written += reply.length;
    this.events.replied();
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.transport.close();
    this.events.end(this.received, this.written, this.requests);
  }
}
