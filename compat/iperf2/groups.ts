import {
  HEADER_BW,
  HEADER_TCP_READ_ENHANCED,
  HEADER_TCP_WRITE_ENHANCED,
  bwLine,
  tcpReadEnhancedLine,
  tcpWriteEnhancedLine,
  tcpWriteEnhancedSumLine,
} from "./text-report.ts";
import { csvTcpLine, finalCsvTime, type CsvFigures } from "./csv-report.ts";
import type { TcpStatsTracker } from "./tcp-stats.ts";
import type { Printer } from "./printer.ts";
import type { FormatLetter } from "./units.ts";
import type { Endpoint } from "./text-report.ts";
import type { Snapshot, StreamCounters } from "../../src/counters.ts";
import type { DataPlane } from "../../src/engine/data-plane.ts";
import type { MeasuredPlane } from "../../src/engine/measured-plane.ts";
import type { Side } from "../../src/engine/test-run.ts";
import { LiveTest } from "./live-test.ts";

/**
 * One iperf 2 "test" as the reports see it: the streams of one client invocation (its -P connections, the -d
 * connect-backs, the sending half of --full-duplex). Each stream prints its final line when it ends; the group prints
 * "[SUM]" once every stream has ended, when it had more than one. With -i the group prints interval lines for its
 * live streams (and their sum) on one clock.
 */

export interface Member {
  /** Printed id: "1", or "*2" for a stream the peer asked us to send. */
  id: string;
  numericId: number;
  /** The engine stream whose counters this member reports. */
  stream: { plane: DataPlane; index: number };
  /** Cumulative payload bytes and read/write calls in the stream's counters (iperf's view of them). */
  bytes(c: StreamCounters): number;
  calls(c: StreamCounters): number;
  startMs: number;
  endMs?: number;
  /** CSV endpoints: client first. */
  client: Endpoint;
  server: Endpoint;
  /** Sender side of an -e report prints writes, receiver side reads. */
  role: "send" | "recv";
  /** -e senders: TCP_INFO of the socket (retransmits, cwnd, RTT); absent where the runtime cannot read it. */
  tcp?: TcpStatsTracker;
}

/** What -e prints in a sender's TCP columns when the socket's TCP_INFO cannot be read: iperf's "NA" form. */
const NO_TCP_INFO = { retry: 0, cwndK: null, rttUs: 0, rttVarUs: 0 };

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
  /** The test as the status endpoint (--http) shows it; ends when the group closes. */
  live?: LiveTest;
}

const LATE_STREAM_MS = 1000;

export class ReportGroup {
  readonly members: Member[] = [];
  private forward = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private tick = 0;
  private lastBytes = new Map<Member, number>();
  private lastCalls = new Map<Member, number>();
  private closed = false;
  private grace: ReturnType<typeof setTimeout> | undefined;
  /** Where interval 0 starts: the first stream's start (connecting and opening streams are not part of it). */
  private clockMs = 0;

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
    this.lastBytes.set(m, 0);
    this.lastCalls.set(m, 0);
    if (this.members.length === 1 && this.o.intervalS > 0 && !this.closed) this.startClock(m.startMs);
  }

  private startClock(originMs: number): void {
    this.clockMs = originMs;
    this.o.live?.cutsIntervals();
    const every = this.o.intervalS * 1000;
    this.timer = setTimeout(() => {
      this.interval();
      if (!this.closed) this.timer = setInterval(() => this.interval(), every);
    }, Math.max(0, originMs + every - performance.now()));
  }

  private heading(role: "send" | "recv"): string {
    if (!this.o.enhanced) return HEADER_BW;
    return role === "send" ? HEADER_TCP_WRITE_ENHANCED : HEADER_TCP_READ_ENHANCED;
  }

  /** The sum's heading and columns follow its streams when they all go one way; mixed sums print plain figures. */
  private sumRole(): "send" | "recv" | null {
    const roles = new Set(this.members.map((m) => m.role));
    return roles.size === 1 ? [...roles][0]! : null;
  }

  private line(m: Member, start: number, end: number, bytes: number, calls: number, at: Date | null, final: boolean): void {
    if (this.o.csv) {
      const f: CsvFigures = { at, client: m.client, server: m.server, id: m.numericId, start, end, bytes, millis: this.o.enhanced };
      this.printer.csvLine(csvTcpLine(f));
      return;
    }
    const fig = { id: m.id, start, end, bytes };
    let text = bwLine(fig, this.o.format);
    if (this.o.enhanced && m.role === "recv") text = tcpReadEnhancedLine(fig, calls, this.o.format);
    if (this.o.enhanced && m.role === "send") {
      const tcp = m.tcp ? (final ? m.tcp.final() : m.tcp.interval()) : NO_TCP_INFO;
      text = tcpWriteEnhancedLine(fig, calls, 0, tcp, this.o.format);
    }
    this.printer.report(this.heading(m.role), text);
  }

  private sumLine(start: number, end: number, bytes: number, calls: number): void {
    const role = this.sumRole();
    if (this.o.enhanced && role === "send") {
      this.printer.report(this.heading("send"), tcpWriteEnhancedSumLine({ start, end, bytes }, calls, 0, 0, this.o.format));
      return;
    }
    this.printer.report(role ? this.heading(role) : HEADER_BW, bwLine({ id: "SUM", start, end, bytes }, this.o.format));
  }

  /** The counters of the test's streams at one instant: the Test's cut (its interval cut when `interval`). */
  private cut(interval = false): Map<MeasuredPlane, Snapshot> {
    const live = this.o.live;
    return (live && (interval ? live.interval() : live.cut())) ?? new Map();
  }

  private counters(m: Member, cut: Map<MeasuredPlane, Snapshot>): StreamCounters {
    return LiveTest.of(cut, m.stream.plane).streams[m.stream.index]!;
  }

  private interval(): void {
    const live = this.members.filter((m) => m.endMs === undefined);
    if (live.length === 0) return;
    const start = this.tick * this.o.intervalS;
    const end = start + this.o.intervalS;
    this.tick++;
    let sum = 0;
    let sumCalls = 0;
    const cut = this.cut(true);
    for (const m of live) {
      const counters = this.counters(m, cut);
      const b = m.bytes(counters);
      const c = m.calls(counters);
      const d = b - this.lastBytes.get(m)!;
      this.line(m, start, end, d, c - this.lastCalls.get(m)!, new Date(), false);
      sumCalls += c - this.lastCalls.get(m)!;
      this.lastBytes.set(m, b);
      this.lastCalls.set(m, c);
      sum += d;
    }
    if (this.members.length > 1 && !this.o.csv) this.sumLine(start, end, sum, sumCalls);
  }

  /** A data plane of this test, whose stream started (was accepted or connected) at `startMs`. */
  attach(plane: DataPlane, side: Side, startMs?: number): void {
    this.o.live?.attach(plane, side, startMs);
  }

  /** A member's stream ended: its final line, then the sum once the whole test is over. */
  ended(m: Member, endMs = performance.now()): void {
    if (m.endMs !== undefined) return;
    this.o.live?.begin();
    // The end and the interval timer fall on the same instant: the interval that just closed comes first.
    if (this.timer && (endMs - this.clockMs) / 1000 >= (this.tick + 1) * this.o.intervalS - 0.05) this.interval();
    m.endMs = endMs;
    const seconds = (endMs - m.startMs) / 1000;
    const c = this.counters(m, this.cut());
    this.line(m, 0, seconds, m.bytes(c), m.calls(c), finalCsvTime(this.o.intervalS), true);
    if (this.members.some((x) => x.endMs === undefined)) return;
    if (this.forward < this.expected) {
      clearTimeout(this.grace);
      this.grace = setTimeout(() => this.finish(), this.o.lateStreamMs ?? LATE_STREAM_MS);
      return;
    }
    this.finish();
  }

  /** Every stream has ended: the sum, once. */
  private finish(): void {
    if (this.closed) return;
    this.close();
    if (this.members.length > 1 && !this.o.csv) {
      const cut = this.cut();
      const counters = this.members.map((x) => this.counters(x, cut));
      const bytes = this.members.reduce((n, x, i) => n + x.bytes(counters[i]!), 0);
      const calls = this.members.reduce((n, x, i) => n + x.calls(counters[i]!), 0);
      const last = Math.max(...this.members.map((x) => x.endMs!));
      const first = Math.min(...this.members.map((x) => x.startMs));
      this.sumLine(0, (last - first) / 1000, bytes, calls);
    }
  }

  /** No more members (all done, or the client vanished before announcing all of them). */
  close(): void {
    this.closed = true;
    this.o.live?.end();
    // One timer handle, a timeout first and an interval after: clearTimeout cancels either.
    clearTimeout(this.timer);
    this.timer = undefined;
    clearTimeout(this.grace);
    this.grace = undefined;
  }
}
