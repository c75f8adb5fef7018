/**
 * iperf3's per-stream interval records and end totals, read as windows of the engine's Test: each interval is the
 * Test's interval window (so /status shows the very intervals iperf3 prints), every other figure a window between
 * cuts the Test took, and the TCP figures (retransmits, cwnd, RTT...) its TCP_INFO at those cuts. iperf3's timing
 * rules on top: times count from TEST_START, and again from the end of the omit period, when the byte counts restart
 * too (UDP packet and loss counts keep running, minus the omitted part).
 */
import type { StreamCounters } from "../../src/counters.ts";
import type { DataPlane } from "../../src/engine/data-plane.ts";
import type { MeasuredPlane } from "../../src/engine/measured-plane.ts";
import type { Cut, Window } from "../../src/engine/cut.ts";
import type { TestRun } from "../../src/engine/test-run.ts";
import type { Results, StreamResult } from "../../interop/iperf3/results.ts";
import type { IntervalResult, ReportStream } from "./report-model.ts";
import { UNDER_MARK_READ_MS } from "../../src/worker/poll-group.ts";

/** One stream as the sampler reads it: its report, and where the Test counts it. */
export interface SampledStream {
  report: ReportStream;
  plane: MeasuredPlane;
  /** Index of the stream inside its plane. */
  index: number;
  /** The Test reads this TCP sender's TCP_INFO at its cuts (TestRun.readTcpInfo): retransmits, cwnd, RTT... */
  tcpInfo?: boolean;
  /** Bytes the connection carried before the payload (the client's 37-byte cookie), which TCP_INFO counts. */
  preambleBytes?: number;
}

/** A stream of a running test: its plane is the Workers'. */
export interface LiveStream extends SampledStream {
  plane: DataPlane;
}

const us = (s: number) => Math.round(s * 1e6) / 1e6;

/** A stream whose counts stopped (a sender at TEST_END) while others still settle: its cut, and whether an interval already ended past it. */
interface Frozen {
  cut: Cut;
  spent: boolean;
}

type Test = Pick<TestRun, "cut" | "interval" | "since" | "between" | "originAt">;

export class StreamSampler<S extends SampledStream = LiveStream> {
  private t0 = 0;
  private lastMs = 0;
  private omitting = false;
  /** Where the byte totals count from: the streams' open (TCP), TEST_START (UDP), or the end of omit. */
  private base!: Cut;
  /** The streams' open, where packet and loss counts run from. */
  private origin!: Cut;
  /** The last interval's end cut. */
  private last!: Cut;
  /** Bytes a TCP sender wrote before the omit end that the peer had not acknowledged: the peer counts them after it. */
  private unacked: number[] = [];
  private rttSum: number[] = [];
  private rttCount: number[] = [];
  private readonly frozen = new Map<S, Frozen>();
  stopMs = 0;

  constructor(
    readonly streams: S[],
    private readonly udp: boolean,
    /** The engine's Test the streams are attached to; it cuts every plane at one instant. */
    private readonly test: Test,
  ) {
    this.hasRetransmits = !udp && streams.some((s) => s.tcpInfo === true);
  }

  /** TCP senders whose retransmits we can read (3.12's sender_has_retransmits); fixed when the test starts. */
  readonly hasRetransmits: boolean;

  /** From now on these streams report what they have now (their Workers may write a little more). */
  freeze(which: (s: S) => boolean): void {
    const cut = this.test.cut();
    for (const s of this.streams) if (which(s) && !this.frozen.has(s)) this.frozen.set(s, { cut, spent: false });
  }

  /** What `s` moved over the interval `w`: a frozen stream's interval ends at its freeze, later ones are empty. */
  private intervalOf(s: S, w: Window): { c: StreamCounters; w: Window } {
    const f = this.frozen.get(s);
    const to = f ? this.test.between(f.spent ? f.cut : w.from, f.cut) : w;
    return { c: to.stream(s.plane, s.index)!, w: to };
  }

  /** What `s` moved from `from` to the last interval's end (a frozen stream: to its freeze). */
  private upToLast(s: S, from: Cut): { c: StreamCounters; w: Window } {
    const w = this.test.between(from, this.frozen.get(s)?.cut ?? this.last);
    return { c: w.stream(s.plane, s.index)!, w };
  }

  /**
   * TEST_START: intervals and totals count from `t0Ms`; with omit, everything until omitEnd() is marked omitted.
   * Streams count from their first byte (their planes are fresh, and a Worker may read before we get here: a
   * loaded client of 128 streams read datagrams before it processed TEST_START); no handshake datagram is counted.
   */
  start(t0Ms: number, omitS: number): void {
    this.t0 = this.lastMs = t0Ms;
    this.omitting = omitS > 0;
    this.origin = this.test.originAt(t0Ms);
    this.base = this.origin;
    this.last = this.base;
    this.unacked = this.streams.map(() => 0);
    this.rttSum = this.streams.map(() => 0);
    this.rttCount = this.streams.map(() => 0);
  }

  /** The omit period is over: close the omitted interval, restart the clock and the byte totals. */
  omitEnd(nowMs: number): void {
    if (!this.omitting) return;
    this.sample(nowMs);
    this.omitting = false;
    this.t0 = this.lastMs = nowMs;
    this.base = this.last;
    this.streams.forEach((s, i) => {
      const r = s.report;
      const { c, w } = this.upToLast(s, this.origin);
      // A TCP sender's written bytes run ahead of what the peer has by what sits in the socket buffers; the peer
      // restarts its count at its own omit end, so ours restarts from what the peer has acknowledged.
      const acked = !this.udp && r.sender ? w.tcpInfo(s.plane, s.index)?.bytes_acked : undefined;
      if (acked !== undefined) this.unacked[i] = c.bytes - Math.min(c.bytes, Math.max(0, acked - (s.preambleBytes ?? 0)));
      // iperf3 keeps UDP counts since the start and subtracts what the omit period saw.
      r.omittedPacketCount = r.sender ? c.packets : c.maxSeq;
      r.omittedCntError = c.lost;
      r.omittedOutOfOrder = c.outOfOrder;
      r.retransmits = 0;
    });
  }

  /** One interval for every stream, appended to their reports. */
  sample(nowMs: number): void {
    const startS = us((this.lastMs - this.t0) / 1000);
    const endS = us((nowMs - this.t0) / 1000);
    const durationS = Math.fround((nowMs - this.lastMs) / 1000);
    const window = this.test.interval(nowMs);
    this.streams.forEach((s, i) => {
      const { c, w } = this.intervalOf(s, window);
      const r = s.report;
      const iv: IntervalResult = {
        startS, endS, durationS, bytes: c.bytes, omitted: this.omitting,
        retransmits: 0, sndCwnd: 0, sndWnd: 0, rttUs: 0, rttvarUs: 0, pmtu: 0,
        packets: r.sender ? c.packets : w.levelRise(s.plane, s.index, "maxSeq"),
        lost: c.lost, outOfOrder: c.outOfOrder, jitterS: c.jitter,
      };
      const info = !this.udp && r.sender ? w.tcpInfo(s.plane, s.index) : undefined;
      if (info) {
        iv.retransmits = c.tcpRetrans;
        iv.sndCwnd = (info.snd_cwnd ?? 0) * (info.snd_mss ?? 0);
        iv.sndWnd = info.snd_wnd ?? 0;
        iv.rttUs = info.rtt_us ?? 0;
        iv.rttvarUs = info.rttvar_us ?? 0;
        iv.pmtu = info.pmtu ?? 0;
        r.retransmits += iv.retransmits;
        r.maxSndCwnd = Math.max(r.maxSndCwnd, iv.sndCwnd);
        r.maxSndWnd = Math.max(r.maxSndWnd, iv.sndWnd);
        r.maxRttUs = Math.max(r.maxRttUs, iv.rttUs);
        if (r.minRttUs === 0 || iv.rttUs < r.minRttUs) r.minRttUs = iv.rttUs;
        this.rttSum[i]! += iv.rttUs;
        this.rttCount[i]!++;
        r.meanRttUs = Math.trunc(this.rttSum[i]! / this.rttCount[i]!);
      }
      r.intervals.push(iv);
    });
    for (const f of this.frozen.values()) f.spent = true;
    this.last = window;
    this.lastMs = nowMs;
  }

  /** The end of the test on this side: the last (partial) interval and this side's totals. */
  finish(nowMs: number): void {
    if (nowMs > this.lastMs) this.sample(nowMs);
    this.stopMs = nowMs;
    const endTimeS = us((nowMs - this.t0) / 1000);
    this.streams.forEach((s, i) => {
      const r = s.report;
      if (r.sender) {
        r.bytesSent = this.upToLast(s, this.base).c.bytes + this.unacked[i]!;
        r.packetCount = this.upToLast(s, this.origin).c.packets;
      } else this.receivedTotals(s, this.last);
      r.endTimeS = endTimeS;
    });
  }

  /**
   * The receivers' totals again, now: what arrived after finish() counts too, the test's times stay. A stock
   * sender stops only on our TEST_END, and 3.16+'s sending threads a little after it; their client (threads that
   * read until the results) counts that tail, and so does ours.
   */
  recountReceived(): void {
    const now = this.test.cut();
    for (const s of this.streams) if (!s.report.sender) this.receivedTotals(s, now);
  }

  /** A receiving stream's totals up to `to`: bytes from the base, packet and loss counts from the streams' open. */
  private receivedTotals(s: S, to: Cut): void {
    const r = s.report;
    r.bytesReceived = this.test.between(this.base, to).stream(s.plane, s.index)!.bytes;
    const c = this.test.between(this.origin, to).stream(s.plane, s.index)!;
    r.packetCount = c.maxSeq;
    r.cntError = c.lost;
    r.outOfOrder = c.outOfOrder;
    r.jitterS = c.jitter;
  }

  /**
   * This side's results document (docs/protocols/iperf3.md §7). `withOmitted`: the omit period's share of errors and
   * packets as 3.14+ servers send it (3.18 sends it for every protocol, 0 for TCP); our client writes 3.12's document.
   */
  results(cpu: [number, number, number], senderHasRetransmits: number, congestionUsed: string | undefined, withOmitted: boolean): Results {
    const streams: StreamResult[] = this.streams.map((s) => {
      const r = s.report;
      return {
        id: r.id,
        bytes: r.sender ? r.bytesSent : r.bytesReceived,
        retransmits: r.sender && senderHasRetransmits === 1 ? r.retransmits : -1,
        jitterS: r.sender ? 0 : r.jitterS,
        errors: r.sender ? 0 : r.cntError,
        packets: r.packetCount,
        omitted: withOmitted ? { errors: r.sender ? 0 : r.omittedCntError, packets: r.omittedPacketCount } : undefined,
        startTimeS: 0,
        endTimeS: r.endTimeS,
      };
    });
    return { cpuUtilTotal: cpu[0], cpuUtilUser: cpu[1], cpuUtilSystem: cpu[2], senderHasRetransmits, congestionUsed, streams };
  }

  /** Folds the peer's results into the reports (what the stock client does in get_results). */
  mergePeer(peer: Results): void {
    for (const p of peer.streams) {
      const r = this.streams.find((s) => s.report.id === p.id)?.report;
      if (!r) continue;
      const peerTime = (p.endTimeS ?? 0) - (p.startTimeS ?? 0);
      r.peerPacketCount = p.packets;
      r.peerTimeS = p.endTimeS !== undefined && p.startTimeS !== undefined ? peerTime : 0;
      if (r.sender) {
        r.bytesReceived = p.bytes;
        r.jitterS = p.jitterS;
        r.cntError = p.errors;
      } else {
        r.bytesSent = p.bytes;
        r.retransmits = p.retransmits;
      }
    }
  }

  /** This side's bytes and blocks so far, sent and received apart (for -n / -k, idle detection, the rate limit). */
  progress(blockSize: number): { sent: number; received: number; sentBlocks: number; receivedBlocks: number } {
    const out = { sent: 0, received: 0, sentBlocks: 0, receivedBlocks: 0 };
    const w = this.test.since(this.base);
    this.streams.forEach((s, i) => {
      const c = w.stream(s.plane, s.index)!;
      const bytes = c.bytes + this.unacked[i]!;
      // A TCP block is a len-byte write; a UDP block is a datagram, received ones counted as 3.12 counts its reads
      // (not the highest sequence number, which counts lost datagrams too: -R -k would end short of its count).
      const blocks = this.udp ? c.packets : Math.floor(bytes / blockSize);
      if (s.report.sender) {
        out.sent += bytes;
        out.sentBlocks += blocks;
      } else {
        out.received += bytes;
        out.receivedBlocks += blocks;
      }
    });
    return out;
  }
}

/**
 * Waits until the received counters stop moving (data in flight has landed), at most 100 ms. Still means still for
 * longer than a marked receiver leaves its last bytes unread (UNDER_MARK_READ_MS): at 5 ms, 3.12 -P 128 into our
 * server came out 300-2,000 bytes short of what the client sent, over 3 to 17 streams.
 */
export async function settleReceived(sampler: StreamSampler, len: number): Promise<void> {
  const stepMs = 5;
  let last = -1;
  let stillMs = 0;
  for (let waited = 0; waited < 100; waited += stepMs) {
    const got = sampler.progress(len).received;
    stillMs = got === last ? stillMs + stepMs : 0;
    if (stillMs > UNDER_MARK_READ_MS) return;
    last = got;
    await new Promise((r) => setTimeout(r, stepMs));
  }
}
