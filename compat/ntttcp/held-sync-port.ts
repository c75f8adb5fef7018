import type { Net, TcpListener } from "../../src/net/types.ts";
import type { Transport } from "../../interop/ntttcp/transport.ts";
import { listenControl, type ControlHandlers } from "./control.ts";

type Peer = { host: string | undefined; port: number | undefined };
type Accept = (t: Transport, peer: Peer) => ControlHandlers | null;

/** Senders that may wait for the next test at once, and the bytes each may send meanwhile (its 'X' and its cycle). */
const MAX_WAITING = 16;
const MAX_WAITING_BYTES = 64;

interface Waiting {
  t: Transport;
  peer: Peer;
  bytes: Uint8Array[];
  size: number;
  handlers: ControlHandlers | undefined;
}

/**
 * A -H receiver's Linux sync port, open from one test to the next as 1.4.3's one sync thread serves them all
 * (docs/protocols/ntttcp-linux.md §4.3). Each test takes the connections that arrive while it runs; one that arrives
 * once it has finished (a sender started right after the last one ended) waits, its bytes kept, for the next test.
 * Handed to the finished test, it was negotiated with and then closed, and the stock sender waited for its 'R'
 * forever; with the port closed between tests it would be refused.
 */
export class HeldSyncPort {
  private listener: TcpListener | undefined;
  private accept: Accept | undefined;
  private readonly waiting = new Set<Waiting>();

  constructor(private readonly net: Net) {}

  /** A test takes the port's connections from now on, those that waited first (with what they sent). */
  open(host: string, port: number, accept: Accept, admit: (peer: Peer) => boolean): void {
    this.listener ??= listenControl(this.net, host, port, (t, peer) => this.arrived(t, peer), admit);
    this.accept = accept;
    for (const w of this.waiting) this.handOver(w, accept);
  }

  /** The test finished: connections that arrive from now on wait for the next one. */
  close(): void {
    this.accept = undefined;
  }

  /** The receiver ends: the port and the connections still waiting close. */
  stop(): void {
    this.accept = undefined;
    this.listener?.stop(true);
    this.listener = undefined;
    for (const w of this.waiting) w.t.close();
    this.waiting.clear();
  }

  private arrived(t: Transport, peer: Peer): ControlHandlers | null {
    if (this.accept) return this.accept(t, peer);
    if (this.waiting.size >= MAX_WAITING) return null;
    const w: Waiting = { t, peer, bytes: [], size: 0, handlers: undefined };
    this.waiting.add(w);
    return {
      onData: (b) => {
        if (w.handlers) return w.handlers.onData(b);
        w.size += b.byteLength;
        if (w.size > MAX_WAITING_BYTES) {
          // More than a sender says before its reply: not a sender.
          this.waiting.delete(w);
          return t.close();
        }
        w.bytes.push(b.slice());
      },
      onClose: () => (w.handlers ? w.handlers.onClose() : this.waiting.delete(w)),
    };
  }

  private handOver(w: Waiting, accept: Accept): void {
    this.waiting.delete(w);
    const h = accept(w.t, w.peer);
    if (h === null) return w.t.close();
    w.handlers = h;
    for (const b of w.bytes) h.onData(b);
  }
}
