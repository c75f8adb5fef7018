/**
 * A control connection as a session transport: Bun sockets take what the kernel accepts and no more, so writes
 * that do not fit wait here for `drain`, and a close waits until they are out.
 */
import type { TcpSocket } from "./types.ts";

/** Fits every session's injected transport (`{ write, close }`). */
export class QueuedWriter {
  private queue: Uint8Array[] = [];
  private closing = false;
  closed = false;

  constructor(private readonly socket: TcpSocket<unknown>) {}

  write(bytes: Uint8Array): void {
    if (this.closed || this.closing) return;
    if (this.queue.length > 0) {
      this.queue.push(bytes.slice());
      return;
    }
    const n = this.socket.write(bytes);
    if (n < 0) return;
    if (n < bytes.length) this.queue.push(bytes.slice(n));
  }

  /** Call from the socket's drain handler. */
  drain(): void {
    while (this.queue.length > 0) {
      const b = this.queue[0]!;
      const n = this.socket.write(b);
      if (n < 0) {
        this.queue = [];
        break;
      }
      if (n < b.length) {
        this.queue[0] = b.subarray(n);
        return;
      }
      this.queue.shift();
    }
    if (this.closing) this.finish();
  }

  close(): void {
    if (this.closed) return;
    this.closing = true;
    if (this.queue.length === 0) this.finish();
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.socket.end();
  }
}
