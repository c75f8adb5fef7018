import { jitterStep } from "../../src/formulas.ts";
import type { ReportLatency, ServerReport } from "./server-report.ts";
import { ReportFlag } from "./flags.ts";
import { safeCount } from "./words.ts";

/**
 * What an iperf 2 UDP receiver counts for one flow, fed one datagram at a time. The figures are the ones the server
 * report carries and both sides print:
 *  - bytes and packets include the FIN datagram (stock 2.1.8: 93 x 1470 bytes for 92 data datagrams + FIN);
 *  - datagrams = the highest sequence seen, where the FIN with seq -N counts as datagram N;
 *  - lost = gaps in the sequence, net of datagrams that arrived late (those count as out of order);
 *  - jitter = RFC 1889 running estimate over (arrival wall clock - sender stamp);
 *  - transit min/max/mean/M2 over the same differences (the -e latency columns; meaningful with synced clocks).
 * Times are seconds (floating); the caller passes the arrival wall clock so tests can replay captures.
 */
export class UdpReceiverStats {
  bytes = 0;
  packets = 0;
  lost = 0;
  outOfOrder = 0;
  duplicates = 0;
  maxSeq = 0;
  jitter = 0;
  firstArrival = -1;
  /** The flow's start when the client told it (--trip-times: its own start), else its first arrival. */
  startAt = -1;
  lastArrival = -1;
  finSeen = false;
  private lastTransit = Number.NaN;
  private transitCount = 0;
  private transitMin = Number.POSITIVE_INFINITY;
  private transitMax = Number.NEGATIVE_INFINITY;
  private transitSum = 0;
  private transitMean = 0;
  private transitM2 = 0;
  /** Told each datagram's transit (seconds): the glue times it into the flow's engine stream. */
  onTransit: ((seconds: number) => void) | undefined;
  /** Packets per whole second since the first datagram, for the PPS column: [second index, count]. */
  private ppsWindow = { index: 0, count: 0, last: 0 };

  /** Accounts one datagram. `seq` < 0 is the FIN. Returns false for a datagram that changes nothing (after the FIN). */
  add(seq: number, sentSeconds: number, arrivalSeconds: number, length: number): boolean {
    if (this.finSeen && seq < 0) return false;
    this.packets++;
    this.bytes += length;
    if (this.firstArrival < 0) this.firstArrival = arrivalSeconds;
    this.lastArrival = arrivalSeconds;
    this.countPps(arrivalSeconds);
    const position = seq < 0 ? -seq : seq;
    if (seq < 0) this.finSeen = true;
    if (position === this.maxSeq + 1) {
      this.maxSeq = position;
    } else if (position > this.maxSeq) {
      this.lost += position - this.maxSeq - 1;
      this.maxSeq = position;
    } else if (position > 0) {
      // A datagram behind the highest seen: late (it was counted lost when the gap opened) or a copy.
      if (this.lost > 0) {
        this.lost--;
        this.outOfOrder++;
      } else {
        this.duplicates++;
      }
    }
    this.addTransit(arrivalSeconds - sentSeconds);
    return true;
  }

  private addTransit(transit: number): void {
    if (!Number.isNaN(this.lastTransit)) this.jitter = jitterStep(this.jitter, transit - this.lastTransit);
    this.lastTransit = transit;
    this.transitCount++;
    this.transitSum += transit;
    if (transit < this.transitMin) this.transitMin = transit;
    if (transit > this.transitMax) this.transitMax = transit;
    const delta = transit - this.transitMean;
    this.transitMean += delta / this.transitCount;
    this.transitM2 += delta * (transit - this.transitMean);
    this.onTransit?.(transit);
  }

  private countPps(arrival: number): void {
    const index = Math.floor(arrival - this.firstArrival);
    if (index !== this.ppsWindow.index) {
      this.ppsWindow.last = this.ppsWindow.count;
      this.ppsWindow.index = index;
      this.ppsWindow.count = 0;
    }
    this.ppsWindow.count++;
  }

  /** When the flow's clock starts (wall clock, seconds); -1 before any datagram. */
  get start(): number {
    return this.startAt >= 0 ? this.startAt : this.firstArrival;
  }

  /** Seconds from the start to the last datagram (the FIN, once seen). */
  get duration(): number {
    return this.firstArrival < 0 ? 0 : this.lastArrival - this.start;
  }

  /** Datagrams the sender sent as far as we can tell: the highest sequence position seen. */
  get datagrams(): number {
    return this.maxSeq;
  }

  latency(): ReportLatency {
    const n = this.transitCount;
    return {
      minTransit: n ? this.transitMin : 0,
      maxTransit: n ? this.transitMax : 0,
      sumTransit: this.transitSum,
      meanTransit: n ? this.transitMean : 0,
      // The stock client treats this pair as microseconds squared (its stdev = sqrt(m2 / (n - 1)) us).
      m2Transit: this.transitM2 * 1e12,
      vdTransit: 0,
      transitCount: n,
      // Whole test rate when it lasted under a second, else the last full one-second window.
      ppsPackets: this.ppsWindow.index === 0 ? this.packets : this.ppsWindow.last,
      ppsSeconds: 1,
    };
  }

  /**
   * The report to send back for the FIN; `enhanced` (server -e) flags the latency words for the client to print.
   * Counts saturate at 2^53 - 1: a sequence number near 2^63 (a FIN of -2^63) must still get a report, not an error.
   */
  report(enhanced: boolean): ServerReport {
    return {
      flags: (ReportFlag.valid | ReportFlag.seqno64 | (enhanced ? ReportFlag.extend : 0)) >>> 0,
      totalBytes: safeCount(this.bytes),
      duration: this.duration,
      lost: safeCount(this.lost),
      outOfOrder: safeCount(this.outOfOrder),
      datagrams: safeCount(this.datagrams),
      jitter: this.jitter,
      latency: this.latency(),
    };
  }
}
