import type { TcpSocket } from "./types.ts";

/**
 * A protocol session's transport over a main-thread control socket (iperf 2 headers, netperf messages, ntttcp sync
 * bytes). Bun sockets are unbuffered, so a partial write keeps the rest queued until `drain`.
 */
export interface Queued {
  queue: Uint8Array[];
  /** end() or close() asked for once the queue is empty. */
  after: "none" | "end" | "close";
}

export function newQueued(): Queued {
  return { queue: [], after: "none" };
}

export class SocketTransport<T extends Queued> {
  constructor(private readonly s: TcpSocket<T>) {}
  write(bytes: Uint8Array): void {
    this.s.data.queue.push(bytes.slice());
    flushQueued(this.s);
  }
  end(): void {
    this.s.data.after = "end";
    flushQueued(this.s);
  }
  close(): void {
    this.s.data.after = "close";
    flushQueued(this.s);
  }
}

/** Writes what the kernel takes; call again from the socket's drain handler. */
export function flushQueued<T extends Queued>(s: TcpSocket<T>): void {
  const q = s.data.queue;
  while (q.length > 0) {
    const head = q[0]!;
    const n = s.write(head, 0, head.byteLength);
    if (n < 0) {
      q.length = 0;
      return;
    }
    if (n < head.byteLength) {
      q[0] = head.subarray(n);
      return;
    }
    q.shift();
  }
  if (s.data.after !== "none") s.end();
}
