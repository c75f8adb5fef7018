import { finalCsvTime } from "./csv-report.ts";
import type { Printer } from "./printer.ts";
import type { FormatLetter } from "./units.ts";
import type { StreamCounters } from "../../src/counters.ts";
import type { MeasuredPlane } from "../../src/engine/measured-plane.ts";
import type { Side, TestRun } from "../../src/engine/test-run.ts";
import type { Cut, Window } from "../../src/engine/cut.ts";
import { datagramsSent } from "../../src/formulas.ts";
import { timedLatency } from "../../src/engine/timed-latency.ts";
import { type LineKind, type WindowFigures, memberLine, sumLine } from "./member-lines.ts";

/**
 * One iperf 2 "test" as the reports see it: the streams of one client invocation (its -P connections, the -d
 * connect-backs, the sending half of --full-duplex). Each stream prints its final line when it ends; the group prints
 * "[SUM]" once every stream has ended, when it had more than one. With -i the group prints interval lines for its
 * live streams (and their sum) on one clock.
 */

export interface Member extends LineKind {
  /** The engine stream whose counters this member reports. */
  stream: { plane: MeasuredPlane; index: number };
  /** Where its bytes are counted: a full-duplex stream's reads land in `received`, everything else in `bytes`. */
  counted?: "bytes" | "received";
  /** Bytes iperf counts that no counter holds: the header written before the data (in every window from the start). */
  headerBytes?: number;
  /** The end marker iperf counts in the final line only: a UDP sender's FIN datagram, which no counter holds. */
  fin?: { bytes: number };
  startMs: number;
  endMs?: number;
}

export interface GroupOptions {
  format: FormatLetter;
  enhanced: boolean;
  csv: boolean;
  intervalS: number;
  /**
   * How long a group whose streams have all ended waits for the rest of the streams its header announced. Stock
   * clients open all -P connections before sending, so a missing one is a bad or vanished peer: the group must not
   * swallow a later, unrelated client from the same host.
   */
  lateStreamMs?: number;
  /** The engine's Test of these streams: every line reads its windows; /status shows it; it ends when the group closes. */
  test: TestRun;
}

const LATE_STREAM_MS = 1000;

/**
 * iperf 2's PARTIALPERCENT: with -i, a stream's last interval, cut short by its end, gets its own line when it is
 * longer than this share of -i (the sum's too); a shorter one is only in the final line.
 */
export const SIGNIFICANT_PARTIAL = 0.25;

/**
 * A member's figures over a window of the Test (`c`: its stream's counters moved in it). `first`: the window starts
 * at the stream's open, where iperf counts the header; `final`: the whole-test line, which counts the FIN datagram.
 */
function figuresOf(m: Member, c: StreamCounters, first: boolean, final: boolean): WindowFigures {
  return {
    bytes: (m.counted === "received" ? c.received : c.bytes) + (first ? (m.headerBytes ?? 0) : 0) + (final ? (m.fin?.bytes ?? 0) : 0),
    calls: c.packets,
    sendErrors: c.sendErrors,
    lost: c.lost,
    total: m.role === "send" ? c.packets : datagramsSent(c.packets, c.lost, c.duplicates),
    jitterS: c.jitter,
    outOfOrder: c.outOfOrder,
    latency: timedLatency(c),
    histogram: c.histogram,
    // Stock's sender counts its first frame twice (its count starts at the first frame's id, 1, then adds the frame).
    frames: { sent: c.frames + (first && c.frames > 0 ? 1 : 0), missed: c.framesMissed, slips: c.slips },
  };
}

function sum(figures: WindowFigures[]): WindowFigures {
  const t: WindowFigures = { bytes: 0, calls: 0, sendErrors: 0, lost: 0, total: 0, jitterS: 0, outOfOrder: 0 };
  for (const f of figures) {
    t.bytes += f.bytes;
    t.calls += f.calls;
    t.sendErrors += f.sendErrors;
    t.lost += f.lost;
    t.total += f.total;
    t.outOfOrder += f.outOfOrder;
  }
  return t;
}

export class ReportGroup {
  readonly members: Member[] = [];
  private forward = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private tick = 0;
  /** Members whose first interval was printed: later ones do not start at the stream's open. */
  private readonly printed = new Set<Member>();
  private closed = false;
  private grace: ReturnType<typeof setTimeout> | undefined;
  /** Where interval 0 starts: the first stream's start (connecting and opening streams are not part of it). */
  private clockMs = 0;
  /** The cut that closed the last interval printed: a partial interval is measured from it. */
  private lastTick: Cut | undefined;

  constructor(
    readonly key: string,
    /** Forward streams the client announced (its -P); the group is complete when they have all arrived and ended. */
    private readonly expected: number,
    private readonly printer: Printer,
    private readonly o: GroupOptions,
  ) {
  }

  /** Still waiting for streams of the client's -P: not closed and fewer forward streams than announced. */
  get accepting(): boolean {
    return !this.closed && this.forward < this.expected;
  }

  add(m: Member, forward: boolean): void {
    clearTimeout(this.grace);
    this.grace = undefined;
    this.members.push(m);
    if (forward) this.forward++;
    if (this.members.length === 1 && this.o.intervalS > 0 && !this.closed) this.startClock(m.startMs);
  }

  private startClock(originMs: number): void {
    this.clockMs = originMs;
    this.o.test.cutsIntervals();
    const every = this.o.intervalS * 1000;
    this.timer = setTimeout(() => {
      this.interval();
      if (!this.closed) this.timer = setInterval(() => this.interval(), every);
    }, Math.max(0, originMs + every - performance.now()));
  }

  /** The sum's kind: UDP or TCP, and one role when its streams all go one way. */
  private sumKind(): { transport: "tcp" | "udp"; role: "send" | "recv" | null; writeTimes: boolean } {
    const roles = new Set(this.members.map((m) => m.role));
    return { transport: this.members[0]!.transport, role: roles.size === 1 ? [...roles][0]! : null, writeTimes: this.members.some((m) => m.writeTimes) };
  }

  /** `m`'s stream in a window of the Test; a plane the Test never held (attached after it ended) counts from its open. */
  private counters(m: Member, w: Window): StreamCounters {
    return w.stream(m.stream.plane, m.stream.index) ?? m.stream.plane.snapshot().streams[m.stream.index]!;
  }

  /** Everything the members' streams moved since they opened, until now (what they timed with its histograms). */
  private sinceOpen(): Window {
    return this.o.test.since(this.o.test.originAt(this.members[0]?.startMs ?? 0), performance.now(), true);
  }

  private interval(): void {
    const live = this.members.filter((m) => m.endMs === undefined);
    if (live.length === 0) return;
    // The clock has run one interval: data flows on what is attached, whether or not every announced stream came.
    this.o.test.begin();
    const start = this.tick * this.o.intervalS;
    const end = start + this.o.intervalS;
    this.tick++;
    // With the histograms of what the streams timed: an interval's latency min and max are its own.
    const w = this.o.test.interval(performance.now(), true);
    this.lastTick = w;
    const windows = live.map((m) => {
      const f = figuresOf(m, this.counters(m, w), !this.printed.has(m), false);
      this.printed.add(m);
      memberLine(this.printer, this.o, m, start, end, f, new Date(), false);
      return f;
    });
    if (this.members.length > 1) sumLine(this.printer, this.o, this.sumKind(), this.members.length, start, end, sum(windows), false);
  }

  /** A data plane of this test, whose stream started (was accepted or connected) at `startMs`. */
  attach(plane: MeasuredPlane, side: Side, startMs?: number): void {
    this.o.test.attach(plane, side, startMs);
  }

  /**
   * The test's senders stopped at `atMs` (its time is up): the interval that closes there is printed, and no later
   * one, however long the streams take to end (a FIN exchange, a UDP sender waiting for its report).
   */
  stopped(atMs: number): void {
    if (this.timer && (atMs - this.clockMs) / 1000 >= (this.tick + 1) * this.o.intervalS - 0.05) this.interval();
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** A member's stream ended: its final line, then the sum once the whole test is over. */
  ended(m: Member, endMs = performance.now()): void {
    if (m.endMs !== undefined) return;
    this.o.test.begin();
    // The end and the interval timer fall on the same instant: the interval that just closed comes first.
    if (this.timer && (endMs - this.clockMs) / 1000 >= (this.tick + 1) * this.o.intervalS - 0.05) this.interval();
    m.endMs = endMs;
    this.partial(m, endMs);
    const seconds = (endMs - m.startMs) / 1000;
    memberLine(this.printer, this.o, m, 0, seconds, figuresOf(m, this.counters(m, this.sinceOpen()), true, true), finalCsvTime(this.o.intervalS), true);
    if (this.members.some((x) => x.endMs === undefined)) return;
    if (this.forward < this.expected) {
      clearTimeout(this.grace);
      this.grace = setTimeout(() => this.finish(), this.o.lateStreamMs ?? LATE_STREAM_MS);
      return;
    }
    this.finish();
  }

  /** The last interval, from its tick to `end` (seconds on the group's clock), when it is long enough for a line. */
  private partialSpan(end: number): { start: number; end: number } | undefined {
    if (this.o.intervalS <= 0) return undefined;
    const start = this.tick * this.o.intervalS;
    return end - start > SIGNIFICANT_PARTIAL * this.o.intervalS ? { start, end } : undefined;
  }

  /** What moved since the last interval's cut (since the streams opened, before the first). */
  private fromTick(): Window {
    return this.o.test.since(this.lastTick ?? this.o.test.originAt(this.members[0]?.startMs ?? 0), performance.now(), true);
  }

  /** `m` ended at `endMs` inside an interval: that partial interval's line, as stock prints it before the final one. */
  private partial(m: Member, endMs: number): void {
    // Ends where its final line ends: on its own clock, as stock times a stream's partial and final lines.
    const span = this.partialSpan((endMs - m.startMs) / 1000);
    if (!span) return;
    const first = !this.printed.has(m);
    const f = figuresOf(m, this.counters(m, first ? this.sinceOpen() : this.fromTick()), first, false);
    if (f.bytes > 0) memberLine(this.printer, this.o, m, span.start, span.end, f, new Date(), false);
  }

  /** Every stream has ended: the sum, once. */
  private finish(): void {
    if (this.closed) return;
    this.close();
    if (this.members.length > 1) {
      const w = this.sinceOpen();
      const figures = this.members.map((x) => figuresOf(x, this.counters(x, w), true, true));
      const last = Math.max(...this.members.map((x) => x.endMs!));
      const first = Math.min(...this.members.map((x) => x.startMs));
      const partial = this.partialSpan((last - first) / 1000);
      if (partial) {
        const pw = this.fromTick();
        const pf = this.members.map((x) => figuresOf(x, this.counters(x, pw), !this.printed.has(x), false));
        if (pf.some((f) => f.bytes > 0)) sumLine(this.printer, this.o, this.sumKind(), this.members.length, partial.start, partial.end, sum(pf), false);
      }
      sumLine(this.printer, this.o, this.sumKind(), this.members.length, 0, (last - first) / 1000, sum(figures), true);
    }
  }

  /** No more members (all done, or the client vanished before announcing all of them). */
  close(): void {
    this.closed = true;
    this.o.test.end();
    // One timer handle, a timeout first and an interval after: clearTimeout cancels either.
    clearTimeout(this.timer);
    this.timer = undefined;
    clearTimeout(this.grace);
    this.grace = undefined;
  }
}
