import { SYNC_MESSAGE_BYTES } from "../../interop/ntttcp/linux-sync-codec.ts";

/**
 * Who may hold a connection on a receiver's Linux sync port. A real sender writes its 4-byte cycle as soon as it is
 * connected; a connection that has not completed one message yet is unproven. When every seat is taken, the oldest
 * unproven holder gives its seat to the newcomer, so a flood of idle or half-message connections cannot lock real
 * senders out (refusing the newcomer did, found by tests/abuse/ntttcp.test.ts). Only when every holder has spoken
 * is the newcomer refused.
 */
export class SyncSeats<K> {
  /** Insertion order is age order: the first unproven entry is the oldest. */
  private readonly heard = new Map<K, number>();

  constructor(readonly max: number) {}

  get size(): number {
    return this.heard.size;
  }

  /** A new connection: its seat, with the holder to close first when one was evicted; null when refused. */
  admit(key: K): { evict?: K } | null {
    let evict: K | undefined;
    if (this.heard.size >= this.max) {
      for (const [k, bytes] of this.heard) {
        if (bytes < SYNC_MESSAGE_BYTES) {
          evict = k;
          break;
        }
      }
      if (evict === undefined) return null;
      this.heard.delete(evict);
    }
    this.heard.set(key, 0);
    return evict === undefined ? {} : { evict };
  }

  /** Bytes arrived on a seated connection. */
  received(key: K, bytes: number): void {
    const had = this.heard.get(key);
    if (had !== undefined) this.heard.set(key, had + bytes);
  }

  leave(key: K): void {
    this.heard.delete(key);
  }
}
