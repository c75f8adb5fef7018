import { COUNTER_FIELDS, delta, zero, type Snapshot, type StreamCounters } from "../counters.ts";
import type { TcpInfo } from "../sockopt/tcp-info-schema.ts";
import type { HostWindow } from "../host/window.ts";
import type { MeasuredPlane } from "./measured-plane.ts";

/**
 * Every plane a Test holds, cut at one instant: their cumulative counters (src/counters.ts), copied before any was
 * decoded. `atMs` is the instant the cut stands for (performance.now() based): the one the front end stamped it with
 * (`TestRun.interval(atMs)`, iperf3's TEST_START), else when it was taken. A front end keeps cuts only to measure
 * windows from them (`TestRun.since`, `TestRun.between`); it reads no counters out of a cut itself.
 *
 * A cut is a Map from plane to snapshot for the engine's own reading (a Window's streams()); no front end reads it.
 */
export class Cut extends Map<MeasuredPlane, Snapshot> {
  constructor(
    readonly atMs: number,
    planes: Iterable<readonly [MeasuredPlane, Snapshot]> = [],
  ) {
    super(planes);
  }
}

/** A field a window gives as it stood at its end (src/counters.ts `level`), not as moved. */
export type LevelField = Extract<(typeof COUNTER_FIELDS)[number], { kind: "level" }>["name"];

/**
 * What every stream moved between two cuts of a Test: `streams(plane)` is, per stream, `counters.ts`'s `delta` —
 * counters (bytes, packets, transactions, lost, retransmits, the latency histogram...) as moved inside the window,
 * levels (jitter, RTT, cwnd, maxSeq, lastActivityMs...) as they stood at its end. `seconds` is the time between the
 * two cuts' instants. A Window is also its end cut, so the next window is measured from it.
 *
 * A plane missing from the start cut (attached later, or a window from `TestRun.originAt`) counts from its open:
 * everything its streams moved since then. A plane missing from the end cut is not in the window.
 */
export class Window extends Cut {
  private readonly moved = new Map<MeasuredPlane, StreamCounters[]>();
  private hostRead: { host: HostWindow | undefined } | undefined;

  constructor(
    readonly from: Cut,
    to: Cut,
    private readonly readHost?: () => HostWindow | undefined,
    private readonly reportedPlanes: readonly MeasuredPlane[] = [],
  ) {
    super(to.atMs, to);
  }

  /**
   * Every stream of the planes whose figures the Test reports (its counted receivers, else clients, else senders)
   * over the window, histograms included: for pooling several Tests run side by side into one figure (netperf
   * --instances). Only a measured window (`TestRun.measured()`) names them; any other holds none.
   */
  reported(): StreamCounters[] {
    return this.reportedPlanes.flatMap((p) => this.streams(p) ?? []);
  }

  /**
   * The host over the window (src/host/window.ts: CPU modes in total and per CPU, this process, NICs, TCP/UDP
   * tables, interrupts): only a measured window has one (`TestRun.measured()`), where /proc can be read. Read on
   * first use: an open window samples /proc then, which costs milliseconds on a large host.
   */
  get host(): HostWindow | undefined {
    this.hostRead ??= { host: this.readHost?.() };
    return this.hostRead.host;
  }

  get seconds(): number {
    return (this.atMs - this.from.atMs) / 1000;
  }

  /** Each of `plane`'s streams over the window, in the plane's stream order; undefined when the plane is not in it. */
  streams(plane: MeasuredPlane): StreamCounters[] | undefined {
    let out = this.moved.get(plane);
    if (out) return out;
    const to = this.get(plane);
    if (!to) return undefined;
    const from = this.from.get(plane)?.streams;
    out = to.streams.map((s, i) => delta(from?.[i] ?? zero(s), s));
    this.moved.set(plane, out);
    return out;
  }

  /** Stream `index` of `plane` over the window. */
  stream(plane: MeasuredPlane, index: number): StreamCounters | undefined {
    return this.streams(plane)?.[index];
  }

  /**
   * How far a level rose over the window: its value at the end less its value at the start (0 where the stream had
   * not opened). The highest sequence number a UDP receiver saw rises by the datagrams the sender sent in the
   * window, lost ones included (iperf3's receiver packet count).
   */
  levelRise(plane: MeasuredPlane, index: number, field: LevelField): number {
    const end = this.get(plane)?.streams[index]?.[field] ?? 0;
    return end - (this.from.get(plane)?.streams[index]?.[field] ?? 0);
  }

  /** TCP_INFO of the stream's socket at the window's end, where the Test reads it (TestRun.readTcpInfo). */
  tcpInfo(plane: MeasuredPlane, index: number): TcpInfo | undefined {
    return this.get(plane)?.tcpInfo?.[index];
  }
}
