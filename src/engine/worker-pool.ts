import type { FromWorker, ToWorker } from "../worker/messages.ts";
import { availableParallelism } from "node:os";
import type { LocalHost } from "./local-host.ts";
import { place, type Direction, type WorkerLoad } from "./placement.ts";

type Listener = (m: FromWorker) => void;

/** What the pool needs to know of a stream to place it. */
export interface Placed {
  cpu?: number;
  /** A locally handed-off socket: served by the main thread's host. */
  local: boolean;
  dir: Direction;
}

/** Unpinned Workers a pool of the default size may grow to, per core (see placement.ts). */
const MAX_WORKERS_PER_CORE = 4;

const WORKER_ENTRY = workerEntry(import.meta.url);

/**
 * From source the worker sits beside this module; in the compiled binary every module is bundled into the entry at
 * the root of Bun's embedded file system and the worker keeps its source path from there (scripts/build lists it).
 * That root is /$bunfs/root/ on Linux and macOS and B:/~BUN/root/ on Windows (import.meta.url file:///B:/%7EBUN/...).
 */
export function workerEntry(moduleUrl: string): string {
  const path = decodeURIComponent(moduleUrl.replace(/^file:\/\/(?=\/)/, ""));
  const root = /^(.*?\/(?:\$bunfs|~BUN)\/root\/)/.exec(path)?.[1];
  if (root === undefined) return new URL("../worker/data-worker.ts", moduleUrl).href;
  return `${root.replace(/^\/(?=[A-Za-z]:)/, "")}src/worker/data-worker.ts`;
}

/**
 * Long-lived data Workers shared by every test of this process (a server runs many tests at once). Each stream is
 * owned by exactly one Worker, placed by placement.ts.
 */
export class WorkerPool {
  private readonly workers: (Worker | LocalHost)[] = [];
  /** The main thread's own host (LocalHost), made on first need; it serves only locally handed-off sockets. */
  private localIndex: number | undefined;
  private readonly loads: WorkerLoad[] = [];
  /** The CPU a Worker is pinned to; pinned Workers serve only streams that asked for that CPU. */
  private readonly cpuOf: (number | undefined)[] = [];
  private readonly listeners = new Map<number, Listener>();
  private readonly crashListeners = new Set<(worker: number, message: string) => void>();
  private static instance: WorkerPool | undefined;

  private constructor(size: number, private readonly maxUnpinned: number) {
    for (let i = 0; i < size; i++) this.add(undefined);
  }

  private add(cpu: number | undefined): number {
    const i = this.workers.length;
    this.cpuOf.push(cpu);
    this.loads.push(idleLoad());
    this.workers.push(this.spawn(i));
    return i;
  }

  private spawn(i: number): Worker {
    const w = new Worker(WORKER_ENTRY, { type: "module" });
    w.onmessage = (ev: MessageEvent<FromWorker>) => this.dispatch(ev.data);
    w.onerror = (ev: ErrorEvent) => this.crashed(i, ev);
    const cpu = this.cpuOf[i];
    if (cpu !== undefined) w.postMessage({ t: "pin", cpu } satisfies ToWorker);
    // Workers must not keep a finished client alive; servers are kept alive by their listeners.
    (w as unknown as { unref?: () => void }).unref?.();
    return w;
  }

  /**
   * The process-wide pool, created on first use. Told its size, it stays that size; otherwise it starts with one
   * unpinned Worker per core and may grow to MAX_WORKERS_PER_CORE per core when streams go both ways (placement.ts):
   * a server does not know what its clients will bring.
   */
  static shared(opts: { workers?: number } = {}): WorkerPool {
    const size = Math.max(1, opts.workers ?? cores());
    WorkerPool.instance ??= new WorkerPool(size, opts.workers === undefined ? Math.max(size, MAX_WORKERS_PER_CORE * cores()) : size);
    return WorkerPool.instance;
  }

  static shutdown(): void {
    for (const w of WorkerPool.instance?.workers ?? []) w.terminate();
    WorkerPool.instance = undefined;
  }

  /**
   * Picks a Worker for each stream of a test: a stream that names a CPU goes to the Worker pinned there (started on
   * first need, shared by every stream asking for that CPU); the others go where placement.ts says among the
   * unpinned Workers, a new one when it says grow.
   */
  assign(streams: readonly Placed[], joinsTest = false): number[] {
    return streams.map(({ cpu, local, dir }, i) => {
      const w = local ? this.localHost() : cpu === undefined ? this.unpinnedFor(dir, i === 0 && !joinsTest) : this.pinnedWorker(cpu);
      this.loads[w]![dir]++;
      return w;
    });
  }

  private unpinnedFor(dir: Direction, firstOfTest: boolean): number {
    const free = this.cpuOf.flatMap((c, i) => (c === undefined && i !== this.localIndex ? [i] : []));
    const at = place(
      free.map((i) => this.loads[i]!),
      dir,
      free.length < this.maxUnpinned,
      firstOfTest,
    );
    return at === "grow" ? this.add(undefined) : free[at]!;
  }

  /** Makes the main thread's host before a test with locally handed-off sockets is assigned (loaded only then). */
  async prepareLocalHost(): Promise<void> {
    if (this.localIndex !== undefined) return;
    const { LocalHost } = await import("./local-host.ts");
    if (this.localIndex !== undefined) return;
    this.localIndex = this.workers.length;
    this.cpuOf.push(undefined);
    this.loads.push(idleLoad());
    const host = new LocalHost();
    host.onmessage = (ev) => this.dispatch(ev.data);
    this.workers.push(host);
  }

  private localHost(): number {
    if (this.localIndex === undefined) throw new Error("a locally handed-off socket needs prepareLocalHost() first");
    return this.localIndex;
  }

  private pinnedWorker(cpu: number): number {
    const found = this.cpuOf.indexOf(cpu);
    return found >= 0 ? found : this.add(cpu);
  }

  release(workers: readonly number[], dirs: readonly Direction[]): void {
    workers.forEach((w, i) => {
      const l = this.loads[w]!;
      const dir = dirs[i]!;
      // A Worker respawned after a crash starts from zero: its old streams' release must not go below it.
      l[dir] = Math.max(0, l[dir] - 1);
    });
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
    if (m.t === "batch") return m.messages.forEach((one) => this.dispatch(one));
    if (m.t === "log") return console.error(m.message);
    this.listeners.get(m.plane)?.(m);
  }

  /** The tests the Worker served end with an error; a fresh Worker takes its place, so a server keeps serving. */
  private crashed(i: number, ev: ErrorEvent): void {
    this.workers[i]?.terminate();
    this.workers[i] = this.spawn(i);
    this.loads[i] = idleLoad();
    for (const l of this.crashListeners) l(i, `data worker ${i} crashed: ${ev.message}`);
  }
}

const idleLoad = (): WorkerLoad => ({ send: 0, recv: 0, both: 0, rr: 0 });

export function cores(): number {
  return typeof availableParallelism === "function" ? availableParallelism() : 1;
}
