import { encodeClientHeader } from "./client-header.ts";
import { type ClientRequest, type ClientRequestInput, ClientRequest as ClientRequestSchema, buildClientHeader } from "./client-request.ts";
import { ACK_TYPE, type ServerAck, decodeServerAck, serverAckLength } from "./server-ack.ts";
import type { StreamTransport } from "./transport.ts";
import { Iperf2WireError } from "./wire-error.ts";
import { u32 } from "./words.ts";

export interface TcpClientEvents {
  /** The server's ack (stock servers send it for forward tests; -X prints the peer version from it). */
  ack?(ack: ServerAck): void;
  /** Payload from the server (-R, --full-duplex). */
  data?(bytes: Uint8Array): void;
  /** The server closed its side; the session closed ours. */
  end(received: number): void;
}

export type TcpClientState = "idle" | "open" | "sent-fin" | "closed";

/**
 * Client side of one iperf 2 TCP connection. `start()` writes the header (none in -C mode); incoming bytes are the
 * server's ack, recognised by its type/length words (payload from a stock server is ASCII digits, never those),
 * then payload. `finish()` half-closes after the sender is done; the server's EOF then closes the connection.
 */
export class TcpClientSession {
  readonly request: ClientRequest;
  /** What `start()` writes first; null for a headerless (-C) client. */
  readonly header: Uint8Array | null;
  state: TcpClientState = "idle";
  /** Payload bytes received from the server (ack excluded). */
  received = 0;
  private head = new Uint8Array(0);
  private ackDone = false;

  constructor(
    private readonly transport: StreamTransport,
    request: ClientRequestInput,
    private readonly events: TcpClientEvents,
  ) {
    this.request = ClientRequestSchema.parse(request);
    const h = buildClientHeader(this.request);
    this.header = h ? encodeClientHeader(h, "tcp") : null;
  }

  start(): void {
    if (this.state !== "idle") return;
    this.state = "open";
    if (this.header) this.transport.write(this.header);
  }

  onData(chunk: Uint8Array): void {
    if (this.state === "closed" || chunk.length === 0) return;
    if (this.ackDone) return this.payload(chunk);
    const joined = new Uint8Array(this.head.length + chunk.length);
    joined.set(this.head);
    joined.set(chunk, this.head.length);
    if (joined.length < 8) {
      this.head = joined;
      return;
    }
    if (u32(joined, 0) !== ACK_TYPE) {
      this.ackDone = true;
      this.head = new Uint8Array(0);
      return this.payload(joined);
    }
    let length: number;
    try {
      length = serverAckLength(joined)!;
    } catch (e) {
      if (!(e instanceof Iperf2WireError)) throw e;
      this.ackDone = true;
      this.head = new Uint8Array(0);
      return this.payload(joined);
    }
    if (joined.length < length) {
      this.head = joined;
      return;
    }
    this.ackDone = true;
    this.head = new Uint8Array(0);
    this.events.ack?.(decodeServerAck(joined.subarray(0, length)));
    if (joined.length > length) this.payload(joined.subarray(length));
  }

  private payload(bytes: Uint8Array): void {
    this.received += bytes.length;
    this.events.data?.(bytes);
  }

  /** Our sending is over (amount reached, or nothing to send in -R): FIN, keep reading until the server's EOF. */
  finish(): void {
    if (this.state !== "open") return;
    this.state = "sent-fin";
    this.transport.end();
  }

  onEof(): void {
    if (this.state === "closed") return;
    // Bytes held while deciding about the ack were payload after all.
    if (!this.ackDone && this.head.length > 0) this.payload(this.head);
    this.head = new Uint8Array(0);
    this.state = "closed";
    this.transport.close();
    this.events.end(this.received);
  }
}
