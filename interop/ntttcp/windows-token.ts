import type { Transport } from "./transport.ts";

/**
 * Windows NTttcp 5.40 start handshake (docs/protocols/ntttcp-windows.md §4.2): per thread, one short TCP connection to
 * data port + 1000 carrying exactly one byte each way ('X', value ignored), then close. Both roles send first and
 * then read, so either order on the peer works. Written from the spec only; no Windows peer was available.
 */

export const WINDOWS_TOKEN = 0x58;
export const WINDOWS_TOKEN_PORT_OFFSET = 1000;
/** Windows sender retry policy for data and token connects (100 × 100 ms). */
export const WINDOWS_CONNECT_RETRIES = 100;
export const WINDOWS_CONNECT_RETRY_MS = 100;
/** Token ports are data port + 1000, so a sync run is limited to 999 threads. */
export const WINDOWS_MAX_SYNC_THREADS = 999;

export function tokenPort(dataPort: number, offset = WINDOWS_TOKEN_PORT_OFFSET): number {
  const p = dataPort + offset;
  if (p > 65535) throw new RangeError(`token port ${p} for data port ${dataPort} is above 65535`);
  return p;
}

export type TokenOutcome = { ok: true } | { ok: false; reason: "closed-early" };

/** One thread's token exchange on one connection; the same for sender and receiver. */
export class WindowsTokenExchange {
  private sent = false;
  private received = false;
  private done = false;

  constructor(
    private readonly transport: Transport,
    private readonly onDone: (outcome: TokenOutcome) => void,
  ) {}

  /** The token connection is established (connected or accepted). */
  start(): void {
    if (this.sent) return;
    this.sent = true;
    this.transport.write(Uint8Array.of(WINDOWS_TOKEN));
    this.maybeDone();
  }

  onData(bytes: Uint8Array): void {
    // Only the length matters; extra bytes would be a peer error we ignore like Windows (it reads exactly one).
    if (bytes.length > 0) this.received = true;
    this.maybeDone();
  }

  onClose(): void {
    if (this.done) return;
    this.done = true;
    this.onDone(this.received ? { ok: true } : { ok: false, reason: "closed-early" });
  }

  private maybeDone(): void {
    if (this.done || !this.sent || !this.received) return;
    this.done = true;
    this.transport.close();
    this.onDone({ ok: true });
  }
}

/**
 * Counts the per-thread exchanges of one side. Windows starts timing only when every thread has its data
 * connection and has finished its token exchange.
 */
export class WindowsTokenGate {
  private readonly finished = new Set<number>();
  private failed = false;

  constructor(
    readonly threads: number,
    private readonly onAll: () => void,
    private readonly onFail: (thread: number) => void,
  ) {
    if (threads < 1 || threads > WINDOWS_MAX_SYNC_THREADS) {
      throw new RangeError(`Windows sync needs 1..${WINDOWS_MAX_SYNC_THREADS} threads, got ${threads}`);
    }
  }

  /** Builds the exchange for thread `i` (port base+i). */
  exchange(thread: number, transport: Transport): WindowsTokenExchange {
    return new WindowsTokenExchange(transport, (o) => {
      if (this.failed) return;
      if (!o.ok) {
        this.failed = true;
        this.onFail(thread);
        return;
      }
      this.finished.add(thread);
      if (this.finished.size === this.threads) this.onAll();
    });
  }

  get completed(): number {
    return this.finished.size;
  }
}
