import type { BytesByDirection, IntervalEvent, Role, TestView } from "./schema.ts";
import { directionOf, noBytes } from "./direction.ts";
import type { StatusSource } from "./source.ts";

/**
 * A StatusSource that holds what it is given: a front end (or a test) puts each test's latest view, emits its
 * intervals and hands over the results when done. Keeps the `keep` most recent tests so a long-lived server's
 * memory stays bounded.
 */
export class MemorySource implements StatusSource {
  readonly mode: string;
  readonly role: Role;
  readonly persistent: boolean;
  private readonly keep: number;
  /** Newest first. */
  private views: TestView[] = [];
  private readonly done = new Map<string, unknown>();
  /** Bytes of the tests no longer kept. */
  private retiredBytes = 0;
  private readonly retiredByDirection = noBytes();
  private readonly listeners = new Set<(e: IntervalEvent) => void>();

  constructor(opts: { mode: string; role: Role; persistent?: boolean; keep?: number }) {
    this.mode = opts.mode;
    this.role = opts.role;
    this.persistent = opts.persistent ?? false;
    this.keep = Math.max(1, opts.keep ?? 20);
  }

  /** Adds a test or replaces the view of one already known (by id). */
  put(view: TestView): void {
    const at = this.views.findIndex((v) => v.id === view.id);
    if (at >= 0) {
      this.views[at] = view;
      return;
    }
    this.views.unshift(view);
    for (const old of this.views.splice(this.keep)) {
      this.retiredBytes += old.bytes;
      addByDirection(this.retiredByDirection, old);
      this.done.delete(old.id);
    }
  }

  /** Records the results of a finished test; its view should be put with phase "done" as well. */
  finish(id: string, results: unknown): void {
    if (this.views.some((v) => v.id === id)) this.done.set(id, results);
  }

  emit(event: IntervalEvent): void {
    // A listener that throws (a closed SSE stream) must not keep the others from their sample.
    for (const l of [...this.listeners]) {
      try {
        l(event);
      } catch {
        this.listeners.delete(l);
      }
    }
  }

  /** How many listeners are subscribed; lets tests see that a closed /events stream unsubscribed. */
  get listenerCount(): number {
    return this.listeners.size;
  }

  tests(): TestView[] {
    return [...this.views];
  }

  bytesTotal(): number {
    return this.views.reduce((a, v) => a + v.bytes, this.retiredBytes);
  }

  bytesByDirection(): BytesByDirection {
    const out = { ...this.retiredByDirection };
    for (const v of this.views) addByDirection(out, v);
    return out;
  }

  current(): TestView | undefined {
    return this.views.find((v) => v.phase !== "done");
  }

  results(id?: string): unknown | undefined {
    if (id !== undefined) return this.done.get(id);
    const latest = this.views.find((v) => this.done.has(v.id));
    return latest ? this.done.get(latest.id) : undefined;
  }

  subscribe(listener: (e: IntervalEvent) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }
}

function addByDirection(into: BytesByDirection, view: TestView): void {
  for (const s of view.streams) {
    const d = directionOf(s.side);
    if (d) into[d] += s.bytes;
  }
}
