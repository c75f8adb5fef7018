import { delta, zero, type Snapshot, type StreamCounters } from "../counters.ts";
import { cyclesPerByte, lossPercent, packetsPerSecond, throughputBps, transactionsPerSecond } from "../formulas.ts";
import { count, max, mean, merge, min, percentiles } from "../histogram.ts";
import { createHostSampler, type HostSampler } from "../host/sampler.ts";
import type { HostSample } from "../host/sample.ts";
import { hostWindow, type HostWindow } from "../host/window.ts";
import { HIST_BUCKETS } from "../counters.ts";
import type { Figures, Interval, Phase, Results, StreamFigures } from "../report/result.ts";
import type { MeasuredPlane } from "./measured-plane.ts";
import { Cut, Window } from "./cut.ts";
import { VERSION } from "../version.ts";
import { announceRun } from "./registry.ts";
import { tcpPath } from "./tcp-path.ts";
import { getProcessLabels } from "../fleet/labels.ts";
import type { Sockopt } from "../sockopt/sockopt.ts";
import { sleep } from "../../lib/sleep.ts";

/** Longest a cut across planes may take before it is taken again (see snaps): a few transactions at most. */
const CUT_MS = 0.02;
/**
 * Beyond this many streams interval cuts copy no latency histograms (8 KiB a stream, and its percentiles): at 10,000
 * TCP_RR flows that was 80 MB a second, and it kept the main thread past the control protocol's 10 s deadline. Their
 * intervals then carry no latency; the measured window's figures still do.
 */
const INTERVAL_LATENCY_STREAMS = 1000;

export type Side = StreamFigures["side"];

export interface TestInfo {
  mode: string;
  role: string;
  peer?: string;
  transport: "tcp" | "udp";
  test: "stream" | "rr" | "crr";
}

export interface Timing {
  warmupS: number;
  /** 0 = until stopped from outside (by the peer's protocol or Ctrl+C). */
  durationS: number;
  cooldownS: number;
  intervalS: number;
}

interface Group {
  plane: MeasuredPlane;
  side: Side;
  /** In the Test's own figures (results, intervals, /status); a plane held but not counted is only read by windows. */
  counted: boolean;
}

/**
 * How a Test opens and closes its measured window when a session, not a timer, decides: iperf 2's tests (the
 * client's -P planes, counted from the accept), netperf's data phases (expectedPlanes 1, fromOpen).
 */
export interface TestOptions {
  /**
   * The window opens by itself (begin()) once this many planes are attached — stock iperf 2 clients open all their
   * -P connections before they send — or earlier when the front end calls begin() (a stream ended first: a peer that
   * never opened them all). A plane attached after that is held, not counted: windows (interval, measured, since)
   * still read it, the Test's figures (results, intervals, /status) leave it out, as it belongs to no window this
   * test measured. Without it the front end calls beginMeasuring() itself, and a late plane counts from when it joins.
   */
  expectedPlanes?: number;
  /**
   * The window counts everything the streams moved since they opened, not since it began (iperf 2 counts from the
   * accept, the bytes that came with the connection's first read included; netperf from the data connection's open),
   * and it begins at the first plane's `openedAtMs` (attach()) rather than when begin() runs.
   */
  fromOpen?: boolean;
  /**
   * The window closes where its streams last moved a byte, not when endMeasuring() runs: for a receiver that learns
   * of the end only from the sender's close, which may come a while after its last byte (ntttcp under `serve`: a
   * sender that holds its connections open past its own end). Read every few milliseconds while the window is open.
   */
  endsAtLastByte?: boolean;
}

type IntervalListener = (i: Interval, run: TestRun) => void;

/** An instant a front end's protocol starts its test on, before the window opens (see TestRun.reached). */
export type StreamsReached = "every stream connected" | "a byte moved";

/** How often reached() reads the counters: a Worker tells accepts and first bytes only through them. */
const REACHED_POLL_MS = 2;

/**
 * One test, the engine's one measurement path: its data planes, the phase clock (warm-up → measuring → cool-down →
 * done, only the measured window counts, as in ntttcp), the cuts and per-stream deltas, interval samples, the host
 * window and the results document; it announces itself to the status registry. Protocol sessions drive the phases
 * themselves (iperf3's TEST_START/TEST_END) and read their own figures as windows of its cuts (src/engine/cut.ts):
 * interval() (since the caller's last interval), measured() (the measured window, with the host's figures over it),
 * since(cut)/between(a, b) (from a cut the front end kept: a base, a freeze) — each stream's counters moved in the
 * window (counters.delta) and the window's seconds. No front end subtracts counters itself, so what it prints and
 * what /status and /results show are the same numbers; native modes call runTimed(). See docs/ARCHITECTURE.md,
 * "One Test".
 */
export class TestRun {
  phase: Phase = "waiting";
  readonly startedAt = new Date();
  private readonly groups: Group[] = [];
  private measureStart: Snapshot[] = [];
  private measureEnd: Snapshot[] | undefined;
  private measureStartMs = 0;
  /** The window counts from the streams' open (beginMeasuring's `fromOpen`): so do planes attached later. */
  private countsFromOpen = false;
  /** The first attached plane's open instant, where a `fromOpen` window begins. */
  private firstOpenedMs: number | undefined;
  private ended = false;
  private measureEndMs = 0;
  /** With `endsAtLastByte`: the counted streams' bytes, and when that sum last changed. */
  private lastByte: { bytes: number; atMs: number; timer: ReturnType<typeof setInterval> } | undefined;
  private hostStart: HostSample | undefined;
  private host: HostWindow | undefined;
  private readonly sampler: HostSampler | undefined;
  private lastSample: { at: number; snaps: Snapshot[] } | undefined;
  /** Where the front end's next interval() window starts: its last interval cut, or where sampling started. */
  private lastCut: Cut | undefined;
  private quickestCopyMs = Infinity;
  private intervalTimer: ReturnType<typeof setInterval> | undefined;
  private ownClock = true;
  private readonly listeners = new Set<IntervalListener>();
  private readonly phaseListeners = new Set<(p: Phase) => void>();
  /** Main-thread duplicates of stream sockets whose TCP_INFO every cut reads (readTcpInfo); closed by finish(). */
  private readonly tcpInfoFds = new Map<MeasuredPlane, Map<number, { fd: number; sockopt: Sockopt }>>();
  readonly intervals: Interval[] = [];
  readonly errors: string[] = [];
  /**
   * Host (100 = every core) and process (100 = one core) CPU over the last interval, while intervals are watched, and
   * each core's modes (the live page's CPU per core).
   */
  liveCpu: { busyPercent: number; processPercent: number; perCpu?: HostWindow["perCpu"] } | undefined;
  /** /proc/stat and /proc/self/stat only: read every interval, where the window's sampler reads everything twice. */
  private liveHost: { sampler: HostSampler; prev: HostSample } | undefined;
  interrupted = false;
  phaseStartedMs = performance.now();

  constructor(
    readonly info: TestInfo,
    private phases: Timing,
    private readonly options: TestOptions = {},
  ) {
    this.sampler = createHostSampler();
    announceRun(this);
  }

  get timing(): Timing {
    return this.phases;
  }

  /**
   * The phases as the peer's protocol settled them before anything began (ntttcp's negotiated Linux sync cycle): a
   * Test can exist, and be waited on (reached), before its length is known. Ignored once a phase began.
   */
  retime(timing: Timing): void {
    if (this.phase === "waiting") this.phases = timing;
  }

  /**
   * Resolves true once the counted streams reach `state`, false when `signal` aborts first: "every stream connected"
   * (each stream holds a connection it accepted or opened), "a byte moved" (any stream moved its first byte). For a
   * front end whose protocol starts its test on such an instant (ntttcp's receivers: all of a sender's connections
   * accepted, or its first byte).
   */
  private countedStreams(): StreamCounters[] {
    return this.groups.filter((g) => g.counted).flatMap((g) => g.plane.snapshot(false).streams);
  }

  async reached(state: StreamsReached, signal: AbortSignal): Promise<boolean> {
    const holds = () => {
      const streams = this.countedStreams();
      return state === "a byte moved" ? streams.some((s) => s.bytes > 0) : streams.length > 0 && streams.every((s) => s.connections > 0);
    };
    while (!signal.aborted) {
      if (holds()) return true;
      await sleep(REACHED_POLL_MS, signal);
    }
    return false;
  }

  /**
   * A plane joins the Test. A plane attached after the window began (a late stream) counts from the moment it joins,
   * or from its open in a window counted from the streams' open; with `expectedPlanes` it is held, not counted (see
   * TestOptions), and attach returns false. `openedAtMs`: when the plane's stream was accepted or connected, where a
   * `fromOpen` window begins (the first plane's). After end() nothing is attached (false).
   */
  attach(plane: MeasuredPlane, side: Side, openedAtMs?: number): boolean {
    if (this.ended) return false;
    const counted = this.options.expectedPlanes === undefined || !this.measureStartMs;
    this.groups.push({ plane, side, counted });
    this.firstOpenedMs ??= openedAtMs;
    const now = () => (this.countsFromOpen ? zeroSnapshot(plane.snapshot(true)) : plane.snapshot(true));
    if (this.measureStartMs) this.measureStart.push(now());
    if (this.measureEnd) this.measureEnd.push(plane.snapshot(true));
    if (this.lastSample && this.lastCut) {
      const joined = this.countsFromOpen ? zeroSnapshot(plane.snapshot(false)) : plane.snapshot(false);
      this.lastSample.snaps.push(joined);
      // A new cut, not the old one grown: a window a caller holds keeps the planes it was cut over.
      this.lastCut = new Cut(this.lastCut.atMs, [...this.lastCut, [plane, joined] as const]);
    }
    plane.onStreamEnd((stream, end) => {
      if (counted && end.reason === "error" && end.error) this.errors.push(`stream ${stream}: ${end.error.message}`);
    });
    const expected = this.options.expectedPlanes;
    if (counted && expected !== undefined && this.groups.length >= expected) this.begin();
    return counted;
  }

  /**
   * The measured window opens now if it has not (idempotent; a no-op after end()): counted from the streams' open at
   * the first plane's open instant with `fromOpen`, else from now. For front ends that open the window on an event
   * (all expected planes there, the first stream ended, netperf's data phase started).
   */
  begin(): void {
    if (this.measureStartMs || this.ended) return;
    const fromOpen = this.options.fromOpen === true;
    this.beginMeasuring(fromOpen ? (this.firstOpenedMs ?? performance.now()) : performance.now(), fromOpen);
  }

  /**
   * The test is over (idempotent): a window that never began (the expected planes never all came) begins now, so it
   * still holds what the attached streams moved; then it closes, and the Test is done. Windows read afterwards
   * (measured()) end on the cut it closed on.
   */
  end(): void {
    if (this.ended) return;
    if (this.groups.length > 0) this.begin();
    this.ended = true;
    if (this.measureStartMs) this.endMeasuring();
    this.finish();
  }

  get planes(): MeasuredPlane[] {
    return this.groups.map((g) => g.plane);
  }

  onInterval(l: IntervalListener): () => void {
    if (!this.liveHost && this.phase !== "done") {
      const sampler = createHostSampler(["cpu", "process"]);
      if (sampler) this.liveHost = { sampler, prev: sampler.sample() };
    }
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  onPhase(l: (p: Phase) => void): () => void {
    this.phaseListeners.add(l);
    return () => this.phaseListeners.delete(l);
  }

  private setPhase(p: Phase): void {
    this.phase = p;
    this.phaseStartedMs = performance.now();
    for (const l of this.phaseListeners) l(p);
  }

  private snaps(withHist: boolean): Snapshot[] {
    // Every plane is copied before any is decoded, so a client and its server are cut at one instant. The main thread
    // shares its cores with the Workers: a copy it was preempted in (seen: 180 µs, 37 TCP_RR transactions) is taken
    // again, at most twice.
    // "Preempted" is measured against the quickest copy this test has made: at 10,000 streams a copy (1.9 MB) never
    // takes under CUT_MS, and every cut was taken three times.
    for (let tries = 1; ; tries++) {
      const t0 = performance.now();
      const copies = this.groups.map((g) => g.plane.copyCounters());
      const took = performance.now() - t0;
      this.quickestCopyMs = Math.min(this.quickestCopyMs, took);
      if (took <= CUT_MS + 2 * this.quickestCopyMs || tries === 3) {
        return this.groups.map((g, i) => this.withTcpInfo(g.plane, g.plane.snapshot(withHist, copies[i])));
      }
    }
  }

  /**
   * The Test reads TCP_INFO of stream `stream` of `plane` at every cut from now on, through `fd`, a main-thread
   * duplicate of the stream's socket, which the Test now owns (it keeps the socket's figures readable after the
   * stream's Worker let go of it, and closes it at finish()). A front end that reports per-socket TCP figures at its
   * own interval boundaries (iperf3: snd_cwnd × snd_mss, snd_wnd, rttvar, pmtu at every -i, -i 0.1 too, and
   * bytes_acked at the omit end) needs them read at the cut: the Workers' counters carry RTT, cwnd and retransmits
   * only, sampled once a second. The cut's reading also gives those three counters for the stream, so the Test's
   * retransmits (/status, results) and the front end's are one number.
   */
  readTcpInfo(plane: MeasuredPlane, stream: number, fd: number, sockopt: Sockopt): void {
    let fds = this.tcpInfoFds.get(plane);
    if (!fds) this.tcpInfoFds.set(plane, (fds = new Map()));
    fds.set(stream, { fd, sockopt });
  }

  private withTcpInfo(plane: MeasuredPlane, snap: Snapshot): Snapshot {
    const fds = this.tcpInfoFds.get(plane);
    if (!fds) return snap;
    snap.tcpInfo = [];
    for (const [i, { fd, sockopt }] of fds) {
      const info = sockopt.tcpInfo(fd);
      const s = snap.streams[i];
      if (!info || !s) continue;
      snap.tcpInfo[i] = info;
      if (info.rtt_us !== undefined) s.tcpRttUs = info.rtt_us;
      if (info.snd_cwnd !== undefined) s.tcpCwnd = info.snd_cwnd;
      if (info.total_retrans !== undefined) s.tcpRetrans = info.total_retrans;
    }
    return snap;
  }

  private cutOf(snaps: Snapshot[], atMs: number): Cut {
    return new Cut(atMs, this.groups.map((g, i) => [g.plane, snaps[i]!] as const));
  }

  /**
   * Every attached plane at one instant, stamped `atMs` (now by default), to measure windows from (`since`,
   * `between`): iperf3's TEST_START base, a stream's counts frozen at TEST_END. With `withHistograms` the latency
   * histograms are copied too (8 KiB a stream), for windows over transactions.
   */
  cut(withHistograms = false, atMs = performance.now()): Cut {
    return this.cutOf(this.snaps(withHistograms), atMs);
  }

  /** A cut before any stream moved, stamped `atMs`: a window from it counts everything since the streams opened. */
  originAt(atMs: number): Cut {
    return new Cut(atMs);
  }

  /** What every stream moved from `from` until a cut taken now (stamped `atMs`), and in how many seconds. */
  since(from: Cut, atMs = performance.now(), withHistograms = false): Window {
    return new Window(from, this.cut(withHistograms, atMs));
  }

  /** What every stream moved between two cuts of this Test. */
  between(from: Cut, to: Cut): Window {
    return new Window(from, to);
  }

  /**
   * The measured window: from the cut that opened it (beginMeasuring; with `fromOpen`, everything since the streams
   * opened) to the cut that closed it (endMeasuring), or to now while it is open; histograms included. A plane
   * attached after it opened counts from the moment it joined. `seconds` is the window's length as the phase clock
   * counts it (beginMeasuring's `atMs` to endMeasuring); `host` is the host over the window (every /proc figure,
   * per-CPU modes in `host.perCpu`, this process's CPU), read when first asked for while the window is open. Before the window opens:
   * an empty window of 0 seconds.
   */
  measured(): Window {
    if (!this.measureStartMs) {
      const now = this.cut();
      return new Window(now, now);
    }
    const start = this.cutOf(this.measureStart, this.measureStartMs);
    const sides = this.reportingSide();
    const reported = this.groups.filter((g) => g.counted && sides.includes(g.side)).map((g) => g.plane);
    if (this.measureEnd) return new Window(start, this.cutOf(this.measureEnd, this.measureEndMs), () => this.host, reported);
    const hostStart = this.hostStart;
    const sampler = this.sampler;
    return new Window(start, this.cut(true), () => (hostStart && sampler ? hostWindow(hostStart, sampler.sample()) : undefined), reported);
  }

  /**
   * The front end cuts the intervals on its protocol's clock (iperf3's -i): the test keeps no timer of its own, and
   * each interval() is one cut that the front end's own records and the interval listeners (/status) share.
   */
  cutsIntervals(): void {
    this.ownClock = false;
    if (this.intervalTimer) clearInterval(this.intervalTimer);
    this.intervalTimer = undefined;
  }

  /**
   * An interval ends at `atMs` (now by default; the instant the front end stamps it with, performance.now() based):
   * one cut, whose figures go to the interval listeners (/status, /metrics) and whose window goes to the caller —
   * every stream's counters since the caller's previous interval() (the first: since sampling started, at
   * beginWarmup/beginMeasuring, or since the streams opened with `fromOpen`), and that window's seconds, so the
   * printed interval and /status's count the same bytes over the same seconds. A plane attached since the last
   * interval counts from when it joined. Without cutsIntervals() (the Test keeps its own clock, the front end prints
   * no intervals: iperf3 -i 0) the window is the caller's own, and the listeners see the Test's intervals. Called
   * before sampling started: an empty window of 0 seconds. `withHistograms`: the window holds the latency histograms
   * of a stream test's timed streams too (iperf 2 --trip-times prints each interval's own min and max).
   */
  interval(atMs = performance.now(), withHistograms = false): Window {
    const snaps = (this.ownClock ? undefined : this.sampleInterval(atMs, withHistograms)) ?? this.snaps(withHistograms);
    const to = this.cutOf(snaps, atMs);
    const w = new Window(this.lastCut ?? to, to);
    if (this.lastCut) this.lastCut = w;
    return w;
  }

  /** Starts interval sampling; call when data starts flowing (warm-up or measuring). */
  startSampling(atMs = performance.now(), from?: Snapshot[]): void {
    if (this.lastSample) return;
    this.lastSample = { at: atMs, snaps: from ?? this.snaps(false) };
    this.lastCut = this.cutOf(this.lastSample.snaps, atMs);
    if (this.ownClock) this.intervalTimer = setInterval(() => this.sampleInterval(), this.timing.intervalS * 1000);
  }

  /** Cuts the interval since the last one and tells the listeners; returns the cut, or undefined outside sampling. */
  private sampleInterval(now = performance.now(), withHistograms = false): Snapshot[] | undefined {
    if (!this.lastSample || this.phase === "waiting" || this.phase === "done") return undefined;
    const count = this.groups.reduce((n, g) => n + (g.counted ? g.plane.specs.length : 0), 0);
    const snaps = this.snaps((this.info.test !== "stream" || withHistograms) && count <= INTERVAL_LATENCY_STREAMS);
    const seconds = (now - this.lastSample.at) / 1000;
    const base = this.phase === "measuring" ? this.measureStartMs : this.lastSample.at - seconds * 1000;
    const rel = (t: number) => (t - (this.measureStartMs || base)) / 1000;
    const streams = this.figuresPerStream(this.lastSample.snaps, snaps, seconds);
    const interval: Interval = {
      start: rel(this.lastSample.at),
      end: rel(now),
      phase: this.phase === "warm-up" || this.phase === "cool-down" ? this.phase : "measuring",
      sum: this.sideFigures(this.lastSample.snaps, snaps, seconds, this.reportingSide()),
      streams: streams.map(({ connections: _c, ...f }) => f),
    };
    this.lastSample = { at: now, snaps };
    if (this.liveHost) {
      const host = this.liveHost.sampler.sample();
      const w = hostWindow(this.liveHost.prev, host);
      if (w.cpu?.busy !== undefined && w.process) this.liveCpu = { busyPercent: Math.max(0, w.cpu.busy), processPercent: w.process.total, ...(w.perCpu ? { perCpu: w.perCpu } : {}) };
      this.liveHost.prev = host;
    }
    if (interval.phase === "measuring") this.intervals.push(interval);
    for (const l of this.listeners) l(interval, this);
    return snaps;
  }

  /**
   * `atMs`: when a front end's protocol says the phase began (iperf3's TEST_START), if not now. `fromOpen`: the
   * intervals count from the streams' open, the first one holding what moved before this instant (iperf3's TCP
   * streams count from their first byte, which a Worker may read before TEST_START is handled). Returns the cut the
   * first interval counts from.
   */
  beginWarmup(atMs = performance.now(), fromOpen = false): Cut {
    this.setPhase("warm-up");
    this.startSampling(atMs, fromOpen ? this.snaps(false).map(zeroSnapshot) : undefined);
    return this.lastCut!;
  }

  /**
   * The measured window starts at `atMs` (now by default): counters and host figures are snapshotted. `fromOpen`:
   * the window counts everything the streams moved since they opened (iperf 2 counts from the accept, bytes that
   * came with the connection's first read included), not from this instant. Returns the window's start cut, which
   * the first interval counts from too when no warm-up came before.
   */
  beginMeasuring(atMs = performance.now(), fromOpen = false): Cut {
    const now = this.snaps(true);
    this.countsFromOpen = fromOpen;
    this.measureStart = fromOpen ? now.map(zeroSnapshot) : now;
    this.measureStartMs = atMs;
    this.hostStart = this.sampler?.sample();
    if (this.options.endsAtLastByte) this.watchLastByte(atMs);
    this.setPhase("measuring");
    this.startSampling(atMs, [...this.measureStart]);
    return this.cutOf(this.measureStart, atMs);
  }

  private watchLastByte(atMs: number): void {
    const bytes = this.countedStreams().reduce((n, s) => n + s.bytes, 0);
    this.lastByte = { bytes, atMs, timer: setInterval(() => this.readLastByte(), REACHED_POLL_MS) };
  }

  private readLastByte(): void {
    const l = this.lastByte!;
    const bytes = this.countedStreams().reduce((n, s) => n + s.bytes, 0);
    // Seen within a poll of the last byte: the window ends at most REACHED_POLL_MS (and a busy turn) after it.
    if (bytes !== l.bytes) Object.assign(l, { bytes, atMs: performance.now() });
  }

  /** The measured window ends now (later bytes, cool-down, FIN exchange do not count). */
  endMeasuring(): void {
    if (this.measureEnd) return;
    // A front end that cuts its own intervals has cut its last one (iperf3's partial interval at TEST_END).
    if (this.phase === "measuring" && this.ownClock) this.sampleInterval();
    this.measureEnd = this.snaps(true);
    this.measureEndMs = performance.now();
    if (this.lastByte) {
      this.readLastByte();
      clearInterval(this.lastByte.timer);
      this.measureEndMs = this.lastByte.atMs;
      this.lastByte = undefined;
    }
    if (this.hostStart && this.sampler) this.host = hostWindow(this.hostStart, this.sampler.sample());
    this.setPhase("cool-down");
  }

  finish(): void {
    if (!this.measureEnd && this.phase === "measuring") this.endMeasuring();
    if (this.intervalTimer) clearInterval(this.intervalTimer);
    this.intervalTimer = undefined;
    this.sampler?.close();
    this.liveHost?.sampler.close();
    this.liveHost = undefined;
    for (const fds of this.tcpInfoFds.values()) {
      for (const { fd, sockopt } of fds.values()) {
        try {
          sockopt.close(fd);
        } catch {
          // A descriptor that would not close leaves nothing to undo; the Test is done either way.
        }
      }
    }
    this.tcpInfoFds.clear();
    this.setPhase("done");
  }

  /**
   * Runs the phases on our own clock. Ends early when every stream has ended (limits, peer closed) or `signal`
   * aborts (Ctrl+C): the window measured so far is kept and reported.
   */
  async runTimed(signal?: AbortSignal): Promise<void> {
    const { warmupS, durationS, cooldownS } = this.timing;
    let stop!: () => void;
    const stopped = new Promise<void>((r) => (stop = r));
    const onAbort = () => {
      this.interrupted = true;
      stop();
    };
    signal?.addEventListener("abort", onAbort);
    if (signal?.aborted) onAbort();
    void Promise.all(this.planes.map((p) => p.ended)).then(stop);
    const sleep = (s: number) => Promise.race([new Promise<void>((r) => setTimeout(r, s * 1000)), stopped]);
    const ended = () => this.interrupted || this.planes.every((p) => p.ends.every((e) => e !== undefined));
    try {
      if (warmupS > 0) {
        this.beginWarmup();
        await sleep(warmupS);
      }
      if (!ended()) {
        // A caller may open the window before its data starts (no warm-up): the first bytes then count.
        if (this.phase !== "measuring") this.beginMeasuring();
        await (durationS > 0 ? sleep(durationS) : stopped);
        this.endMeasuring();
      }
      if (cooldownS > 0 && !ended()) await sleep(cooldownS);
    } finally {
      signal?.removeEventListener("abort", onAbort);
      if (!this.measureEnd && this.measureStartMs) this.endMeasuring();
    }
  }

  private countedSides(): Set<Side> {
    return new Set(this.groups.filter((g) => g.counted).map((g) => g.side));
  }

  /** Receivers report (as iperf3 and ntttcp receivers do); a sender-only test reports what it sent. */
  reportingSide(): Side[] {
    const sides = this.countedSides();
    if (sides.has("recv")) return ["recv"];
    if (sides.has("client")) return ["client"];
    return [...sides];
  }

  private streamCounters(from: Snapshot[], to: Snapshot[], sides: Side[]): StreamCounters[] {
    const out: StreamCounters[] = [];
    this.groups.forEach((g, gi) => {
      if (!g.counted || !sides.includes(g.side)) return;
      to[gi]!.streams.forEach((s, i) => out.push(delta(from[gi]!.streams[i]!, s)));
    });
    return out;
  }

  private sideFigures(from: Snapshot[], to: Snapshot[], seconds: number, sides: Side[]): Figures {
    return this.withRetransmits(figures(this.streamCounters(from, to, sides), seconds, this.info, !sides.includes("send")), from, to);
  }

  private withRetransmits(f: Figures, from: Snapshot[], to: Snapshot[]): Figures {
    // One retransmit figure per test, whichever side's bytes a figure shows (a receiver's own sockets barely ever
    // retransmit: showing theirs printed 0 next to the sender's 780).
    const retransmits = this.tcpRetransmits(from, to);
    if (retransmits === undefined) delete f.retransmits;
    else f.retransmits = retransmits;
    return f;
  }

  private figuresPerStream(from: Snapshot[], to: Snapshot[], seconds: number): StreamFigures[] {
    const out: StreamFigures[] = [];
    let id = 0;
    this.groups.forEach((g, gi) => {
      if (!g.counted) return;
      to[gi]!.streams.forEach((s, i) => {
        const d = delta(from[gi]!.streams[i]!, s);
        out.push({ id: id++, side: g.side, connections: s.connections, ...figures([d], seconds, this.info, g.side !== "send") });
      });
    });
    return out;
  }

  /**
   * The reporting side's figures and each counted stream's, as results() gives them for the measured window, over
   * the window between two of this Test's cuts instead: a window common to several Tests run side by side
   * (common-window.ts), cut on instants none of their front ends chose. A plane the start cut lacks counts from its
   * open; one the end cut lacks moved nothing in it.
   */
  over(from: Cut, to: Cut): { summary: Figures; streams: StreamFigures[] } {
    const start = this.groups.map((g) => from.get(g.plane) ?? zeroSnapshot(g.plane.snapshot(false)));
    const end = this.groups.map((g, i) => to.get(g.plane) ?? start[i]!);
    const seconds = (to.atMs - from.atMs) / 1000;
    return { summary: this.sideFigures(start, end, seconds, this.reportingSide()), streams: this.figuresPerStream(start, end, seconds) };
  }

  /**
   * Live figures for the status endpoint: the measured window so far (or the last interval before it). For
   * request/response, `latency` is the reporting side's merged histogram and latency sum from the same cut as
   * `sum.transactions`, so /metrics' histogram count and its transactions agree.
   */
  current(): { seconds: number; sum: Figures; latency?: { histogram: Uint32Array; sumUs: number } } | undefined {
    if (!this.measureStartMs) return undefined;
    const rr = this.info.test !== "stream";
    const end = this.measureEnd ?? this.snaps(rr);
    const endMs = this.measureEnd ? this.measureEndMs : performance.now();
    const seconds = (endMs - this.measureStartMs) / 1000;
    const sides = this.reportingSide();
    const counters = this.streamCounters(this.measureStart, end, sides);
    const sum = this.withRetransmits(figures(counters, seconds, this.info, !sides.includes("send")), this.measureStart, end);
    // A client's streams time every transaction: its histogram exists (empty) before the first one completes.
    if (!sum.latency_us && !sides.includes("client")) return { seconds, sum };
    const histogram = new Uint32Array(HIST_BUCKETS);
    let sumUs = 0;
    for (const s of counters) {
      if (s.histogram.length === HIST_BUCKETS) merge(histogram, s.histogram);
      sumUs += s.latencySumUs;
    }
    return { seconds, sum, latency: { histogram, sumUs } };
  }

  /** No receiving stream saw a sequence number (datagrams too small to carry one, or a format without). */
  private unstamped(): boolean {
    return this.groups.every((g) => !g.counted || g.side !== "recv" || g.plane.specs.every((s) => s.kind !== "udp-recv" || s.format === "none"));
  }

  /**
   * The test's retransmits: TCP segments every socket of every stream of this test retransmitted between `from` and
   * `to` (TCP_INFO total_retrans, which the Workers publish once a second). Undefined for UDP and where TCP_INFO was
   * never read; never the host's RetransSegs, which counts every other connection too (cpu.host.tcp shows that).
   */
  private tcpRetransmits(from: Snapshot[], to: Snapshot[]): number | undefined {
    if (this.info.transport !== "tcp") return undefined;
    let sum = 0, read = false;
    to.forEach((snap, g) => {
      if (!this.groups[g]!.counted) return;
      snap.streams.forEach((s, i) => {
        if (s.tcpRttUs > 0) read = true;
        sum += s.tcpRetrans - (from[g]?.streams[i]?.tcpRetrans ?? 0);
      });
    });
    return read ? sum : undefined;
  }

  /** The sending streams' TCP_INFO reads over a window (tcp-path.ts); undefined without senders or TCP_INFO. */
  private sendersPath(fromMs: number, toMs: number) {
    if (this.info.transport !== "tcp" || this.info.test !== "stream") return undefined;
    const series = this.groups.filter((g) => g.side === "send" && g.plane.tcpSamples).flatMap((g) => g.plane.specs.map((_, i) => g.plane.tcpSamples!(i)));
    return tcpPath(series, fromMs, toMs);
  }

  results(version = VERSION): Results {
    const origin = this.groups.map((g) => ({ atMs: 0, streams: g.plane.snapshot(false).streams.map(zero) }));
    const start = this.measureStart.length ? this.measureStart : this.snaps(true);
    const end = this.measureEnd ?? this.snaps(true);
    const endMs = this.measureEnd ? this.measureEndMs : performance.now();
    const seconds = this.measureStartMs ? (endMs - this.measureStartMs) / 1000 : 0;
    const sides = this.countedSides();
    const total = this.snaps(false);
    const sum = (side: Side, key: "bytes" | "packets" | "transactions") =>
      sides.has(side) ? this.streamCounters(origin, total, [side]).reduce((a, s) => a + s[key], 0) : undefined;
    const summary = this.sideFigures(start, end, seconds, this.reportingSide());
    const sender = sides.has("send") && sides.has("recv") ? this.sideFigures(start, end, seconds, ["send"]) : undefined;
    // The receivers' figures lead; the congestion window is the senders' (a receiving socket's is unused).
    if (sender?.cwnd !== undefined) summary.cwnd = sender.cwnd;
    const sentPackets = sum("send", "packets");
    const receivedPackets = sum("recv", "packets");
    if (this.info.transport === "udp" && sentPackets !== undefined && receivedPackets !== undefined && this.unstamped()) {
      // Both ends in this process and no sequence numbers on the wire: loss is what was sent and never arrived.
      summary.lost = sentPackets - receivedPackets;
      summary.loss_percent = lossPercent(summary.lost, sentPackets);
    }
    const host = this.host;
    // cycles/byte describes bulk transfer; for transactions it would only measure idle time.
    const cycles = host?.cycles && summary.bytes > 0 && this.info.test === "stream" ? cyclesPerByte(host.cycles, summary.bytes) : undefined;
    return {
      tool: "anyperf",
      version,
      mode: this.info.mode,
      role: this.info.role,
      peer: this.info.peer,
      transport: this.info.transport,
      test: this.info.test,
      started_at: this.startedAt.toISOString(),
      ...labelsField(),
      interrupted: this.interrupted,
      phases: { warmup_s: this.timing.warmupS, measured_s: seconds, cooldown_s: this.timing.cooldownS },
      summary,
      sender,
      receiver: sides.has("send") && sides.has("recv") ? summary : undefined,
      totals: {
        sent_bytes: sum("send", "bytes"),
        received_bytes: sum("recv", "bytes"),
        sent_packets: sentPackets,
        received_packets: receivedPackets,
        // The RR client counts what it completed; a server alone, what it answered.
        transactions: sum("client", "transactions") ?? sum("server", "transactions"),
      },
      streams: this.figuresPerStream(start, end, seconds),
      intervals: this.intervals,
      cpu: {
        busy_percent: host?.cpu?.busy,
        process_percent: host?.process?.total,
        cycles_per_byte: cycles,
        host,
      },
      retransmits: summary.retransmits,
      tcp_path: this.measureStartMs ? this.sendersPath(this.measureStartMs, endMs) : undefined,
      errors: this.errors,
    };
  }
}

/** The origin of a window counted from the streams' open: counters at 0, levels as they are in `s`. */
function zeroSnapshot(s: Snapshot): Snapshot {
  return { atMs: s.atMs, streams: s.streams.map(zero) };
}

/** Figures of a set of streams over one window; the formulas live in src/formulas.ts. */
export function figures(streams: StreamCounters[], seconds: number, info: Pick<TestInfo, "transport" | "test">, receiving = true): Figures {
  let bytes = 0, packets = 0, transactions = 0, lost = 0, ooo = 0, jitter = 0, sendErrors = 0;
  // One stream's figures (every stream of results and intervals) read its histogram as it is: no total to sum into.
  let hist: Uint32Array | undefined = streams.length === 1 && streams[0]!.histogram.length === HIST_BUCKETS ? streams[0]!.histogram : undefined;
  const single = hist !== undefined;
  let retrans = 0, rttSum = 0, rttN = 0, cwnd = 0;
  for (const s of streams) {
    retrans += s.tcpRetrans;
    cwnd += s.tcpCwnd;
    if (s.tcpRttUs > 0) {
      rttSum += s.tcpRttUs;
      rttN++;
    }
    bytes += s.bytes;
    packets += s.packets;
    transactions += s.transactions;
    lost += s.lost;
    ooo += s.outOfOrder;
    sendErrors += s.sendErrors;
    jitter = Math.max(jitter, s.jitter);
    if (!single && s.histogram.length === HIST_BUCKETS) {
      hist ??= new Uint32Array(HIST_BUCKETS);
      merge(hist, s.histogram);
    }
  }
  const f: Figures = { bytes, seconds, throughput_bps: throughputBps(bytes, seconds) };
  // An RTT of 0 means TCP_INFO was never read (no ffi, or UDP): the figures are unavailable, not zero.
  if (info.transport === "tcp" && rttN > 0) {
    f.retransmits = retrans;
    f.rtt_us = rttSum / rttN;
    // A bulk receiver's socket sends no data: its cwnd is the untouched initial window, not a figure of the test.
    if (!receiving || info.test !== "stream") f.cwnd = cwnd;
  }
  if (info.transport === "udp" && info.test === "stream") {
    f.packets = packets;
    f.packets_per_second = packetsPerSecond(packets, seconds);
    if (receiving) {
      f.lost = lost;
      f.loss_percent = lossPercent(lost, packets + lost);
      f.out_of_order = ooo;
      f.jitter_ms = jitter * 1000;
    } else if (sendErrors) f.send_errors = sendErrors;
  }
  if (info.test !== "stream") {
    f.transactions = transactions;
    f.transactions_per_second = transactionsPerSecond(transactions, seconds);
    // Only clients time transactions; a server's streams have counts but an empty histogram.
    if (hist && count(hist) > 0) {
      const [p50, p90, p99, p999] = percentiles(hist, [50, 90, 99, 99.9]) as [number, number, number, number];
      f.latency_us = { mean: mean(hist), min: min(hist), max: max(hist), p50, p90, p99, p999 };
    }
  }
  return f;
}

/** --label (or the pod's identity): present only when there is one, so a plain run's document is unchanged. */
function labelsField(): { labels?: Record<string, string> } {
  const labels = getProcessLabels();
  return Object.keys(labels).length ? { labels } : {};
}
