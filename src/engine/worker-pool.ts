import type { FromWorker, ToWorker } from "../worker/messages.ts";
import { availableParallelism } from "node:os";

type Listener = (m: FromWorker) => void;

/**
 * From source the worker sits beside this module; in the compiled binary every module is bundled into the entry at
 * the root of Bun's embedded file system and the worker keeps its source path from there (scripts/build lists it).
 */
const WORKER_ENTRY = import.meta.url.includes("/$bunfs/")
  ? "/$bunfs/root/src/worker/data-worker.ts"
  : new URL("../worker/data-worker.ts", import.meta.url).href;

/**
 * Long-lived data Workers shared by every test of this process (a server runs many tests at once). Each stream is
 * owned by exactly one Worker; a test's streams are spread over the least loaded Workers.
 */
export class WorkerPool {
  private readonly workers: Worker[] = [];
  private readonly load: number[] = [];
  private readonly listeners = new Map<number, Listener>();
  private readonly crashListeners = new Set<(worker: number, message: string) => void>();
  private static instance: WorkerPool | undefined;

  private constructor(readonly size: number, private readonly pin: boolean) {
    for (let i = 0; i < size; i++) {
      this.workers.push(this.spawn(i));
      this.load.push(0);
    }
  }

  private spawn(i: number): Worker {
    const w = new Worker(WORKER_ENTRY, { type: "module" });
    w.onmessage = (ev: MessageEvent<FromWorker>) => this.dispatch(ev.data);
    w.onerror = (ev: ErrorEvent) => this.crashed(i, ev);
    if (this.pin) w.postMessage({ t: "pin", cpu: i % cores() } satisfies ToWorker);
    // Workers must not keep a finished client alive; servers are kept alive by their listeners.
    (w as unknown as { unref?: () => void }).unref?.();
    return w;
  }

  /** The process-wide pool, created on first use with one Worker per core unless told otherwise. */
  static shared(opts: { workers?: number; pin?: boolean } = {}): WorkerPool {
    WorkerPool.instance ??= new WorkerPool(Math.max(1, opts.workers ?? cores()), opts.pin ?? false);
    return WorkerPool.instance;
  }

  static shutdown(): void {
    for (const w of WorkerPool.instance?.workers ?? []) w.terminate();
    WorkerPool.instance = undefined;
  }

  /** Picks the `n` least loaded Workers for a test of `n` streams (fewer Workers than streams share round-robin). */
  assign(streams: number): number[] {
    const order = this.load.map((l, i) => [l, i] as const).sort((a, b) => a[0] - b[0]).map(([, i]) => i);
    const used = order.slice(0, Math.min(streams, this.size));
    const out: number[] = [];
    for (let s = 0; s < streams; s++) {
      const w = used[s % used.length]!;
      out.push(w);
      this.load[w]!++;
    }
    return out;
  }

  release(workers: number[]): void {
    for (const w of workers) this.load[w]!--;
  }

  post(worker: number, m: ToWorker): void {
    this.workers[worker]!.postMessage(m);
  }

  /** Worker messages for one plane go to its listener. */
  subscribe(plane: number, l: Listener): () => void {
    this.listeners.set(plane, l);
    return () => this.listeners.delete(plane);
  }

  /** Told when a Worker dies, so the tests it served end with an error while the others go on. */
  onCrash(l: (worker: number, message: string) => void): () => void {
    this.crashListeners.add(l);
    return () => this.crashListeners.delete(l);
  }

  private dispatch(m: FromWorker): void {
    if (m.t === "log") return console.error(m.message);
    this.listeners.get(m.plane)?.(m);
  }

  /** The tests the Worker served end with an error; a fresh Worker takes its place, so a server keeps serving. */
  private crashed(i: number, ev: ErrorEvent): void {
    this.workers[i]?.terminate();
    this.workers[i] = this.spawn(i);
    this.load[i] = 0;
    for (const l of this.crashListeners) l(i, `data worker ${i} crashed: ${ev.message}`);
  }
}

export function cores(): number {
  return typeof availableParallelism === "function" ? availableParallelism() : 1;
}
