import { HEADER_BW, bwLine, tcpReadEnhancedLine, HEADER_TCP_READ_ENHANCED } from "./text-report.ts";
import { csvTcpLine, type CsvFigures } from "./csv-report.ts";
import type { Printer } from "./printer.ts";
import type { FormatLetter } from "./units.ts";
import type { Endpoint } from "./text-report.ts";

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
  /** Cumulative payload bytes and read/write calls, read live from the counters. */
  bytes(): number;
  calls(): number;
  startMs: number;
  endMs?: number;
  /** CSV endpoints: client first. */
  client: Endpoint;
  server: Endpoint;
  /** Sender side of an -e report prints writes, receiver side reads. */
  role: "send" | "recv";
}

export interface GroupOptions {
  format: FormatLetter;
  enhanced: boolean;
  csv: boolean;
  intervalS: number;
  /** Stock servers print 19700101000000 in final CSV lines when -i is not set; clients print the real time. */
  epochZeroFinalCsv: boolean;
}

export class ReportGroup {
  readonly members: Member[] = [];
  private forward = 0;
  private timer: ReturnType<typeof setInterval> | undefined;
  private tick = 0;
  private lastBytes = new Map<Member, number>();
  private lastCalls = new Map<Member, number>();
  private closed = false;
  private readonly clockMs = performance.now();

  constructor(
    readonly key: string,
    /** Forward streams the client announced (its -P); the group is complete when they have all arrived and ended. */
    private readonly expected: number,
    private readonly printer: Printer,
    private readonly o: GroupOptions,
  ) {
    if (o.intervalS > 0) this.timer = setInterval(() => this.interval(), o.intervalS * 1000);
  }

  get accepting(): boolean {
    return !this.closed && this.forward < this.expected;
  }

  add(m: Member, forward: boolean): void {
    this.members.push(m);
    if (forward) this.forward++;
    this.lastBytes.set(m, 0);
    this.lastCalls.set(m, 0);
  }

  private heading(): string {
    return this.o.enhanced ? HEADER_TCP_READ_ENHANCED : HEADER_BW;
  }

  private line(m: Member, start: number, end: number, bytes: number, calls: number, at: Date | null): void {
    if (this.o.csv) {
      const f: CsvFigures = { at, client: m.client, server: m.server, id: m.numericId, start, end, bytes };
      this.printer.csvLine(csvTcpLine(f));
      return;
    }
    const text = this.o.enhanced && m.role === "recv" ? tcpReadEnhancedLine({ id: m.id, start, end, bytes }, calls, this.o.format) : bwLine({ id: m.id, start, end, bytes }, this.o.format);
    this.printer.report(this.heading(), text);
  }

  private interval(): void {
    const live = this.members.filter((m) => m.endMs === undefined);
    if (live.length === 0) return;
    const start = this.tick * this.o.intervalS;
    const end = start + this.o.intervalS;
    this.tick++;
    let sum = 0;
    for (const m of live) {
      const b = m.bytes();
      const c = m.calls();
      const d = b - this.lastBytes.get(m)!;
      this.line(m, start, end, d, c - this.lastCalls.get(m)!, new Date());
      this.lastBytes.set(m, b);
      this.lastCalls.set(m, c);
      sum += d;
    }
    if (this.members.length > 1 && !this.o.csv) this.printer.report(this.heading(), bwLine({ id: "SUM", start, end, bytes: sum }, this.o.format));
  }

  /** A member's stream ended: its final line, then the sum once the whole test is over. */
  ended(m: Member, endMs = performance.now()): void {
    if (m.endMs !== undefined) return;
    // The end and the interval timer fall on the same instant: the interval that just closed comes first.
    if (this.timer && (endMs - this.clockMs) / 1000 >= (this.tick + 1) * this.o.intervalS - 0.05) this.interval();
    m.endMs = endMs;
    const seconds = (endMs - m.startMs) / 1000;
    this.line(m, 0, seconds, m.bytes(), m.calls(), this.o.epochZeroFinalCsv && this.o.intervalS === 0 ? null : new Date());
    if (this.forward < this.expected || this.members.some((x) => x.endMs === undefined)) return;
    this.close();
    if (this.members.length > 1 && !this.o.csv) {
      const bytes = this.members.reduce((n, x) => n + x.bytes(), 0);
      const last = Math.max(...this.members.map((x) => x.endMs!));
      const first = Math.min(...this.members.map((x) => x.startMs));
      this.printer.report(this.heading(), bwLine({ id: "SUM", start: 0, end: (last - first) / 1000, bytes }, this.o.format));
    }
  }

  /** No more members (all done, or the client vanished before announcing all of them). */
  close(): void {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
