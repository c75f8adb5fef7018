import { allocCounters, copyCounters, snapshot, type CounterBuffers, type Snapshot } from "../counters.ts";
import { explainSocketError, UserError } from "../errors.ts";
import { StreamSpec, type Endpoint, type StreamSpecInput } from "../stream-spec.ts";
import type { EndReason, FromWorker, SocketBufferSizes } from "../worker/messages.ts";
import type { TcpInfo } from "../sockopt/tcp-info.ts";
import { WorkerPool } from "./worker-pool.ts";
import { directionOf } from "./placement.ts";
import { pathFields, samplesKept, type TcpSample } from "./tcp-path.ts";

export interface StreamEvent {
  stream: number;
  name: "datagram" | "fin" | "connected";
  bytes?: Uint8Array;
  from?: Endpoint;
}

export interface StreamEnd {
  reason: EndReason;
  error?: { message: string; code?: string };
}

let nextPlane = 1;

/**
 * One test's data streams, each owned by a Worker of the shared pool, with their counters in shared memory.
 * `open` resolves once every stream is listening or connected; `go` starts the senders; `stop` ends everything.
 */
export class DataPlane {
  readonly id = nextPlane++;
  readonly localPorts: (number | undefined)[];
  /** Each stream's socket descriptor where its Worker tells it (UDP streams). */
  readonly fds: (number | undefined)[];
  readonly ends: (StreamEnd | undefined)[];
  private readonly buffers: CounterBuffers;
  private readonly workers: number[];
  private readonly eventListeners = new Set<(e: StreamEvent) => void>();
  private readonly tcpInfos: (TcpInfo | undefined)[] = [];
  private readonly samples: TcpSample[][] = [];
  private kept: number | undefined;
  private readonly socketBufferSizes: (SocketBufferSizes | undefined)[] = [];
  private readonly endListeners = new Set<(stream: number, end: StreamEnd) => void>();
  private readonly unsubscribe: Array<() => void> = [];
  private pendingOpen = new Map<number, { resolve: () => void; reject: (e: Error) => void }>();
  private allEnded!: () => void;
  /** Resolves when every stream has ended, for whatever reason. */
  readonly ended: Promise<void>;
  private endedCount = 0;
  private released = false;
  /** go() was posted, or every stream was opened to start by itself. */
  private started = false;

  private constructor(readonly specs: StreamSpec[], private readonly pool: WorkerPool, joinsTest: boolean) {
    this.localPorts = specs.map(() => undefined);
    this.fds = specs.map(() => undefined);
    this.ends = specs.map(() => undefined);
    this.buffers = allocCounters(specs.length);
    this.workers = pool.assign(specs.map((s) => ({ cpu: s.cpu, local: isLocal(s), dir: directionOf(s) })), joinsTest);
    this.ended = new Promise((r) => (this.allEnded = r));
    this.unsubscribe.push(pool.subscribe(this.id, (m) => this.onMessage(m)));
    this.unsubscribe.push(
      pool.onCrash((w, message) => {
        this.workers.forEach((owner, i) => {
          if (owner === w) this.onMessage({ t: "ended", plane: this.id, stream: i, reason: "error", error: { message } });
        });
      }),
    );
  }

  get size(): number {
    return this.specs.length;
  }

  /** Validates the specs, opens every stream, and fails with one clear error if any stream cannot be set up. */
  /**
   * `joinsTest`: these streams join a test that already has streams on other planes (iperf3 opens a plane per data
   * connection as each arrives), so the pool places them as one test's further streams, not as a new client's.
   * `go`: each stream starts in its Worker the moment it is open, with no round trip back here first (go() is then
   * a no-op): for a peer that times its first read from its request, as an iperf 2.2.1 -R --isochronous client does.
   */
  static async open(inputs: StreamSpecInput[], opts: { joinsTest?: boolean; pool?: WorkerPool; go?: boolean } = {}): Promise<DataPlane> {
    const pool = opts.pool ?? WorkerPool.shared();
    const specs = inputs.map((s, i) => StreamSpec.parse({ ...s, id: s.id ?? i }));
    if (specs.some(isLocal)) await pool.prepareLocalHost();
    const plane = new DataPlane(specs, pool, opts.joinsTest ?? false);
    plane.started = opts.go === true;
    try {
      await Promise.all(specs.map((spec, i) => plane.openStream(i, spec)));
    } catch (e) {
      await plane.stop();
      throw e;
    }
    return plane;
  }

  private openStream(i: number, spec: StreamSpec): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pendingOpen.set(i, { resolve, reject });
      this.pool.post(this.workers[i]!, { t: "open", plane: this.id, stream: i, spec, counters: this.buffers.counters, histograms: this.buffers.histograms, ...(this.started ? { go: true as const } : {}) });
    });
  }

  private onMessage(m: FromWorker): void {
    if (m.t === "log") return;
    switch (m.t) {
      case "opened":
        this.localPorts[m.stream] = m.localPort;
        this.fds[m.stream] = m.fd;
        this.pendingOpen.get(m.stream)?.resolve();
        this.pendingOpen.delete(m.stream);
        break;
      case "failed": {
        const spec = this.specs[m.stream]!;
        const where = "listen" in spec && spec.listen ? { ...spec.listen, role: "listen" as const } : "connect" in spec && spec.connect ? { ...spec.connect, role: "connect" as const } : undefined;
        const err = where ? explainSocketError(Object.assign(new Error(m.error.message), { code: m.error.code }), where) : new UserError(m.error.message);
        this.pendingOpen.get(m.stream)?.reject(err);
        this.pendingOpen.delete(m.stream);
        this.markEnded(m.stream, { reason: "error", error: m.error });
        break;
      }
      case "ended":
        this.markEnded(m.stream, { reason: m.reason, error: m.error });
        break;
      case "event":
        for (const l of this.eventListeners) l({ stream: m.stream, name: m.name, bytes: m.bytes, from: m.from });
        break;
      case "tcp-info":
        this.tcpInfos[m.stream] = m.info;
        if (this.specs[m.stream]?.kind === "tcp-send") {
          const s = (this.samples[m.stream] ??= []);
          this.kept ??= samplesKept(this.specs.filter((x) => x.kind === "tcp-send").length);
          if (s.length >= this.kept) s.shift();
          s.push({ atMs: performance.now(), info: pathFields(m.info) });
        }
        if (m.buffers) this.socketBufferSizes[m.stream] = m.buffers;
        break;
      case "buffers":
        this.socketBufferSizes[m.stream] = m.buffers;
        break;
    }
  }

  private markEnded(stream: number, end: StreamEnd): void {
    if (this.ends[stream]) return;
    this.ends[stream] = end;
    // A stream whose end overtakes its "opened" (an adopted socket whose peer's data and FIN were all there: iperf 2
    // -n, --connect-only) was set up and has run; one that ends in an error first (a Worker crash) fails its open.
    const pending = this.pendingOpen.get(stream);
    if (end.reason === "error") pending?.reject(new UserError(end.error?.message ?? `stream ${stream} ended before it was set up`));
    else pending?.resolve();
    this.pendingOpen.delete(stream);
    for (const l of this.endListeners) l(stream, end);
    if (++this.endedCount === this.size) {
      this.release();
      this.allEnded();
    }
  }

  private release(): void {
    if (this.released) return;
    this.released = true;
    this.pool.release(this.workers, this.specs.map(directionOf));
    for (const u of this.unsubscribe) u();
  }

  /**
   * TCP_INFO of a TCP stream's first socket at the last sample (at stop when a socket was still open, else the one
   * before its peer closed): netperf's transport figures. Undefined for UDP and without bun:ffi.
   */
  lastTcpInfo(stream: number): TcpInfo | undefined {
    return this.tcpInfos[stream];
  }

  tcpSamples(stream: number): readonly TcpSample[] {
    return this.samples[stream] ?? [];
  }

  /** SO_SNDBUF and SO_RCVBUF of a stream's first socket: read once -w set them, then at each TCP_INFO sample. */
  socketBuffers(stream: number): SocketBufferSizes | undefined {
    return this.socketBufferSizes[stream];
  }

  onEvent(l: (e: StreamEvent) => void): () => void {
    this.eventListeners.add(l);
    return () => this.eventListeners.delete(l);
  }

  /** `l` hears each stream's end; a stream that ended before (it can, before its open returned) is told at once. */
  onStreamEnd(l: (stream: number, end: StreamEnd) => void): () => void {
    this.endListeners.add(l);
    this.ends.forEach((end, stream) => end && l(stream, end));
    return () => this.endListeners.delete(l);
  }

  go(): void {
    if (this.started) return;
    this.started = true;
    for (const w of new Set(this.workers)) this.pool.post(w, { t: "go", plane: this.id });
  }

  /** Stops every stream (senders send their end markers, FINs are exchanged) and waits until all have ended. */
  async stop(): Promise<void> {
    if (this.endedCount === this.size) return;
    for (const w of new Set(this.workers)) this.pool.post(w, { t: "stop", plane: this.id });
    // A Worker that never answers (crashed, wedged) must not hang the caller.
    let guard: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([this.ended, new Promise((r) => (guard = setTimeout(r, 15_000)))]);
    clearTimeout(guard);
    for (let i = 0; i < this.size; i++) if (!this.ends[i]) this.markEnded(i, { reason: "error", error: { message: "stream did not stop within 15 s" } });
  }

  /**
   * The sending streams write no more, their connections open until stop(): a sender whose test is over keeps its
   * peer from seeing a close before the peer's own end, without sending bytes that no window of its own counts.
   */
  pause(): void {
    for (const w of new Set(this.workers)) this.pool.post(w, { t: "pause", plane: this.id });
  }

  stopStream(stream: number): void {
    this.pool.post(this.workers[stream]!, { t: "stop", plane: this.id, stream });
  }

  /** Sends one datagram from a UDP stream's own socket (reports, replies). */
  send(stream: number, bytes: Uint8Array, to?: Endpoint): void {
    this.pool.post(this.workers[stream]!, { t: "send", plane: this.id, stream, bytes, to });
  }

  /** `counters`: a copyCounters() taken together with other planes' (TestRun's cuts); now when left out. */
  snapshot(withHistograms = false, counters = this.copyCounters()): Snapshot {
    return snapshot(this.buffers, counters, this.size, performance.now(), withHistograms);
  }

  copyCounters(): Float64Array {
    return copyCounters(this.buffers);
  }
}

/** A stream on a socket that stays on the main thread (src/net/local-hand-off.ts). */
const isLocal = (s: StreamSpec) => "adopt" in s && s.adopt?.local === true;
