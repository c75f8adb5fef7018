/**
 * Turns the engine's cumulative counters (and TCP_INFO of sending sockets) into iperf3's per-stream interval
 * records and end totals, reading them through the engine's Test: each interval is the Test's interval cut (so
 * /status shows the very intervals iperf3 prints), and every other look is one of its cuts, with iperf3's timing rules: times count from TEST_START, and again from the end of the
 * omit period, when the byte counts restart too (UDP packet and loss counts keep running, minus the omitted part).
 */
import { zero, type Snapshot, type StreamCounters } from "../../src/counters.ts";
import type { DataPlane } from "../../src/engine/data-plane.ts";
import type { MeasuredPlane } from "../../src/engine/measured-plane.ts";
import type { TestRun } from "../../src/engine/test-run.ts";
import type { TcpInfo } from "../../src/sockopt/tcp-info.ts";
import type { Results, StreamResult } from "../../interop/iperf3/results.ts";
import type { IntervalResult, ReportStream } from "./report-model.ts";

export interface LiveStream {
  report: ReportStream;
  plane: DataPlane;
  /** Index of the stream inside its plane. */
  index: number;
  /**
   * Main-thread duplicate of a TCP sender's socket, for TCP_INFO; closed by release(). Kept rather than the
   * engine's per-stream TCP counters (Slot.tcpRttUs/tcpCwnd/tcpRetrans): iperf3 reports at its own interval
   * boundaries (-i 0.1 too) the congestion window in bytes (snd_cwnd x snd_mss), snd_wnd, rttvar and pmtu, and
   * restarts -O from bytes_acked; the counters carry none of these and are sampled once a second.
   */
  infoFd?: number;
  /** Bytes the connection carried before the payload (the client's 37-byte cookie), which TCP_INFO counts. */
  preambleBytes?: number;
}

const us = (s: number) => Math.round(s * 1e6) / 1e6;

interface Base {
  c: StreamCounters;
  retrans: number;
}

export class StreamSampler {
  private t0 = 0;
  private lastMs = 0;
  private omitting = false;
  private base: Base[] = [];
  private last: Base[] = [];
  private rttSum: number[] = [];
  private rttCount: number[] = [];
  stopMs = 0;

  constructor(
    readonly streams: LiveStream[],
    private readonly udp: boolean,
    private readonly tcpInfo: ((fd: number) => TcpInfo | undefined) | undefined,
    /** The engine's Test the streams are attached to; it cuts every plane at one instant. */
    private readonly test: Pick<TestRun, "cut" | "interval">,
  ) {
    this.hasRetransmits = !udp && tcpInfo !== undefined && streams.some((s) => s.infoFd !== undefined);
  }

  /** TCP senders whose retransmits we can read (3.12's sender_has_retransmits); fixed when the test starts. */
  readonly hasRetransmits: boolean;

  /** Counters taken when a stream stopped counting (a sender at TEST_END) while others still settle. */
  private readonly frozen = new Map<LiveStream, Base>();

  /** From now on these streams report what they have now (their Workers may write a little more). */
  freeze(which: (s: LiveStream) => boolean): void {
    const cut = this.test.cut();
    for (const s of this.streams) if (which(s) && !this.frozen.has(s)) this.frozen.set(s, this.read(s, cut));
  }

  private counters(s: LiveStream, cut: Map<MeasuredPlane, Snapshot>): StreamCounters {
    return (cut.get(s.plane) ?? s.plane.snapshot()).streams[s.index]!;
  }

  private read(s: LiveStream, cut: Map<MeasuredPlane, Snapshot>): Base {
    const f = this.frozen.get(s);
    if (f) return f;
    const info = s.infoFd !== undefined ? this.tcpInfo?.(s.infoFd) : undefined;
    return { c: this.counters(s, cut), retrans: info?.total_retrans ?? 0 };
  }

  /**
   * TEST_START: intervals and totals count from `t0Ms`; with omit, everything until omitEnd() is marked omitted.
   * TCP streams count from their first byte (their planes are fresh, and a Worker may read before we get here);
   * UDP streams from now, which leaves out the 4-byte handshake datagram.
   */
  start(t0Ms: number, omitS: number): void {
    this.t0 = this.lastMs = t0Ms;
    this.omitting = omitS > 0;
    const cut = this.test.cut();
    this.base = this.streams.map((s) => {
      const b = this.read(s, cut);
      return this.udp ? b : { c: zero(b.c), retrans: b.retrans };
    });
    this.last = this.base.map((b) => ({ ...b }));
    this.rttSum = this.streams.map(() => 0);
    this.rttCount = this.streams.map(() => 0);
  }

  /** The omit period is over: close the omitted interval, restart the clock and the byte totals. */
  omitEnd(nowMs: number): void {
    if (!this.omitting) return;
    this.sample(nowMs);
    this.omitting = false;
    this.t0 = this.lastMs = nowMs;
    this.base = this.streams.map((s, i) => {
      const b = { ...this.last[i]!, c: { ...this.last[i]!.c } };
      // A TCP sender's written bytes run ahead of what the peer has by what sits in the socket buffers; the peer
      // restarts its count at its own omit end, so ours restarts from what the peer has acknowledged.
      const info = !this.udp && s.report.sender && s.infoFd !== undefined ? this.tcpInfo?.(s.infoFd) : undefined;
      if (info?.bytes_acked !== undefined) b.c.bytes = Math.min(b.c.bytes, Math.max(0, info.bytes_acked - (s.preambleBytes ?? 0)));
      return b;
    });
    this.streams.forEach((s, i) => {
      const r = s.report;
      const c = this.last[i]!.c;
      // iperf3 keeps UDP counts since the start and subtracts what the omit period saw.
      r.omittedPacketCount = s.report.sender ? c.packets : c.maxSeq;
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
    const cut = this.test.interval(nowMs);
    this.streams.forEach((s, i) => {
      const now = this.read(s, cut);
      const prev = this.last[i]!;
      const r = s.report;
      const iv: IntervalResult = {
        startS, endS, durationS, bytes: now.c.bytes - prev.c.bytes, omitted: this.omitting,
        retransmits: 0, sndCwnd: 0, sndWnd: 0, rttUs: 0, rttvarUs: 0, pmtu: 0,
        packets: r.sender ? now.c.packets - prev.c.packets : now.c.maxSeq - prev.c.maxSeq,
        lost: now.c.lost - prev.c.lost, outOfOrder: now.c.outOfOrder - prev.c.outOfOrder, jitterS: now.c.jitter,
      };
      if (!this.udp && r.sender && s.infoFd !== undefined) {
        const info = this.tcpInfo?.(s.infoFd);
        if (info) {
          iv.retransmits = now.retrans - prev.retrans;
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
      }
      r.intervals.push(iv);
      this.last[i] = now;
    });
    this.lastMs = nowMs;
  }

  /** The end of the test on this side: the last (partial) interval and this side's totals. */
  finish(nowMs: number): void {
    if (nowMs > this.lastMs) this.sample(nowMs);
    this.stopMs = nowMs;
    const endTimeS = us((nowMs - this.t0) / 1000);
    this.streams.forEach((s, i) => {
      const r = s.report;
      const c = this.last[i]!.c;
      const bytes = c.bytes - this.base[i]!.c.bytes;
      if (r.sender) r.bytesSent = bytes;
      else r.bytesReceived = bytes;
      r.packetCount = r.sender ? c.packets : c.maxSeq;
      if (!r.sender) {
        r.cntError = c.lost;
        r.outOfOrder = c.outOfOrder;
        r.jitterS = c.jitter;
      }
      r.endTimeS = endTimeS;
    });
  }

  /** This side's results document (docs/protocols/iperf3.md §7). */
  results(cpu: [number, number, number], senderHasRetransmits: number, congestionUsed: string | undefined): Results {
    const streams: StreamResult[] = this.streams.map((s) => {
      const r = s.report;
      return {
        id: r.id,
        bytes: r.sender ? r.bytesSent : r.bytesReceived,
        retransmits: r.sender && senderHasRetransmits === 1 ? r.retransmits : -1,
        jitterS: r.sender ? 0 : r.jitterS,
        errors: r.sender ? 0 : r.cntError,
        packets: r.packetCount,
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

  /** This side's bytes and blocks so far, sent and received apart (for -n / -k and idle detection). */
  progress(blockSize: number): { sent: number; received: number; sentBlocks: number; receivedBlocks: number } {
    const out = { sent: 0, received: 0, sentBlocks: 0, receivedBlocks: 0 };
    const cut = this.test.cut();
    this.streams.forEach((s, i) => {
      const c = this.counters(s, cut);
      const b = this.base[i]!.c;
      const bytes = c.bytes - b.bytes;
      // A TCP block is a len-byte write; a UDP block is a datagram, received ones counted as 3.12 counts its reads
      // (not the highest sequence number, which counts lost datagrams too: -R -k would end short of its count).
      const blocks = this.udp ? c.packets - b.packets : Math.floor(bytes / blockSize);
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
