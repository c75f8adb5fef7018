import type { IsochSettings } from "./isoch-frames.ts";
import { type ClientHeader, IPERF_2_1_8, type VersionWords, clientHeaderLength, decodeClientHeader } from "./client-header.ts";
import { type ClientRequest, type TestAmount, describeClientHeader } from "./client-request.ts";
import { isBouncebackFlags } from "./bounceback.ts";
import { encodeServerAck } from "./server-ack.ts";
import type { StreamTransport } from "./transport.ts";
import { Iperf2WireError } from "./wire-error.ts";
import { u32 } from "./words.ts";

/** What the server sends when the client asks for traffic back (-R, --full-duplex, -d, -r). */
export interface ServerSend {
  amount: TestAmount;
  /** 0 = unlimited. */
  rate: number;
  rateUnits: "bps" | "pps";
  /** Bytes per write: the client's -l, else iperf 2's TCP default of 128 KiB. */
  writeSize: number;
  /** The client's --fq-rate: SO_MAX_PACING_RATE on the sending socket, bytes/s. */
  fqRate?: number;
  /** A 2.2 client's --tcp-write-prefetch: TCP_NOTSENT_LOWAT on the sending socket, bytes. */
  writePrefetch?: number;
  /** An --isochronous client's frames (-R, --full-duplex): sent at their slots instead of a stream. */
  frames?: IsochSettings;
  /** --trip-times or frames: a stock server sends bursts its client can time (docs/protocols/iperf2.md §2.7). */
  bursts?: boolean;
  /** --trip-times: the bursts follow a header of ours, as a stock server's do. */
  tripTimes?: boolean;
}

/** The server's reading of one accepted connection, decided once the header (or its absence) is known. */
export interface TcpServerTest {
  header: ClientHeader | null;
  request: ClientRequest | null;
  /** The 28-byte ack was written (extended header, client sends): stock servers do it, the -X client needs it. */
  acked: boolean;
  /** Bytes read so far, header included: the stock server counts the header as received data. */
  received: number;
  /** Bytes read past the header, i.e. payload already taken off the socket. */
  pending: Uint8Array;
  /** -R / --full-duplex: send on this connection. */
  sendHere: ServerSend | null;
  /** --bounceback: no client header; `pending` holds every byte read so far, the first request's start included. */
  bounceback: boolean;
  /** -d (now) / -r (after this connection's EOF): open a connection to the client's listener and send. */
  connectBack: (ServerSend & { port: number; when: "now" | "after-eof" }) | null;
}

export type TcpServerState = "flags" | "header" | "data" | "handed-off" | "closed";

export interface TcpServerEvents {
  /** The connection's purpose is known; the glue may now hand the socket over (then call `handOff()`). */
  test(t: TcpServerTest): void;
  /** The client's EOF arrived and we closed (not called after `handOff()`). */
  end(received: number): void;
  /** The first bytes cannot be an iperf 2 header we can honour; the connection was closed. */
  error(e: Iperf2WireError): void;
}

/** iperf 2's default TCP read/write size. */
export const DEFAULT_TCP_LEN = 128 * 1024;

/**
 * Server side of one iperf 2 TCP connection: reads the flags word, then the whole header it announces (at most 256
 * bytes are ever buffered), answers with the ack when a stock server would, and reports what the client asked for.
 * Afterwards it counts payload until EOF and closes at once: the stock client waits for our close before it prints,
 * so any delay here stretches its reported interval.
 */
export class TcpServerSession {
  state: TcpServerState = "flags";
  received = 0;
  private buffered = new Uint8Array(0);
  private need = 4;
  private test: TcpServerTest | null = null;

  constructor(
    private readonly transport: StreamTransport,
    private readonly events: TcpServerEvents,
    private readonly version: VersionWords = IPERF_2_1_8,
  ) {}

  onData(chunk: Uint8Array): void {
    if (this.state === "closed" || this.state === "handed-off" || chunk.length === 0) return;
    this.received += chunk.length;
    if (this.state === "data") return;
    const joined = new Uint8Array(this.buffered.length + chunk.length);
    joined.set(this.buffered);
    joined.set(chunk, this.buffered.length);
    this.buffered = joined;
    try {
      if (this.state === "flags" && this.buffered.length >= 4) {
        if (isBouncebackFlags(u32(this.buffered, 0))) return this.decide(null, 0, true);
        const length = clientHeaderLength(u32(this.buffered, 0), "tcp");
        if (length === null) return this.decide(null, 0);
        this.state = "header";
        this.need = length;
      }
      if (this.state === "header" && this.buffered.length >= this.need) {
        this.decide(decodeClientHeader(this.buffered.subarray(0, this.need), "tcp"), this.need);
      }
    } catch (e) {
      if (!(e instanceof Iperf2WireError)) throw e;
      this.state = "closed";
      this.buffered = new Uint8Array(0);
      this.transport.close();
      this.events.error(e);
    }
  }

  private decide(header: ClientHeader | null, headerBytes: number, bounceback = false): void {
    const request = header ? describeClientHeader(header, "tcp") : null;
    const pending = this.buffered.slice(headerBytes);
    this.buffered = new Uint8Array(0);
    this.state = "data";
    const send = request ? serverSend(request) : null;
    const acked = header?.ext !== undefined && request?.direction === "forward";
    if (acked) this.transport.write(encodeServerAck(this.version));
    this.test = {
      header,
      request,
      acked,
      received: this.received,
      pending,
      bounceback,
      sendHere: request && request.direction !== "forward" ? send : null,
      connectBack:
        request && send && request.connectBack !== "none"
          ? { ...send, port: request.listenPort, when: request.connectBack === "dual" ? "now" : "after-eof" }
          : null,
    };
    this.events.test(this.test);
  }

  /** The glue moved the socket elsewhere (a Worker): this session no longer reads or closes it. */
  handOff(): void {
    if (this.state === "data") this.state = "handed-off";
  }

  /**
   * The client half-closed. A header that never completed is just a short headerless transfer. A connection that
   * closes before its first byte (--connect-only: thousands a second) is no test: it ends here, as a stock server
   * reads no flags from it and reports nothing.
   */
  onEof(): void {
    if (this.state === "closed" || this.state === "handed-off") return;
    if (this.state === "flags" && this.received === 0) {
      this.state = "closed";
      this.transport.close();
      this.events.end(0);
      return;
    }
    if (this.state === "flags" || this.state === "header") this.decide(null, 0);
    if (this.state !== "data") return;
    this.state = "closed";
    this.transport.close();
    this.events.end(this.received);
  }

  /** A deadline passed with no complete header: drop the connection (a silent peer must not hold a slot). */
  expire(): void {
    if (this.state !== "flags" && this.state !== "header") return;
    this.state = "closed";
    this.transport.close();
    this.events.error(new Iperf2WireError("short", `no complete iperf 2 header after ${this.buffered.length} bytes`));
  }
}

function serverSend(r: ClientRequest): ServerSend {
  return {
    amount: r.amount, rate: r.rate, rateUnits: r.rateUnits, writeSize: r.bufLen > 0 ? r.bufLen : DEFAULT_TCP_LEN, ...(r.fqRate ? { fqRate: r.fqRate } : {}), ...(r.writePrefetch ? { writePrefetch: r.writePrefetch } : {}),
    ...(r.isochSettings ? { frames: r.isochSettings } : {}),
    ...(r.tripTimes || r.isochSettings ? { bursts: true } : {}),
    ...(r.tripTimes ? { tripTimes: true } : {}),
  };
}
