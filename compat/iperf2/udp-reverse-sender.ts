import { Pacer } from "../../src/pacer.ts";
import type { UdpSocket } from "../../src/net/types.ts";
import type { TestAmount } from "../../interop/iperf2/client-request.ts";
import { UDP_TRIP_START_AT, digitsPayload, finSeq, timeval } from "../../interop/iperf2/datagram.ts";
import { stampTime } from "../../interop/iperf2/udp-client-session.ts";
import { ISOCH_PAYLOAD, type IsochSettings } from "../../interop/iperf2/isoch-frames.ts";
import { FrameSchedule, type FramePart, frameParts, runAt } from "../../src/worker/frames.ts";
import { SLOTS_PER_STREAM, Slot } from "../../src/counters.ts";
import { stampIperf2Frame } from "../../src/worker/datagram-formats.ts";

/** Largest IPv4 UDP payload (65535 - 20 IP - 8 UDP). */
export const MAX_UDP_PAYLOAD = 65507;

/** Wall clock in seconds with microseconds, the clock iperf 2 datagram stamps use. */
export const wallSeconds = (): number => (performance.timeOrigin + performance.now()) / 1000;

export interface ReverseResult {
  datagrams: number;
  bytes: number;
  seconds: number;
}

/**
 * The server half of `iperf -u -R`: datagrams of the client's size back to its address, from the listening socket
 * (the client's socket is connected to our port and would drop anything from another one), stamped 1, 2, ... and
 * paced to the rate in its header, then a FIN that the client does not answer. It runs on the main thread next to
 * the UDP listener it shares; see the report for why this is not a Worker stream yet.
 */
export class UdpReverseSender {
  private readonly buf: Uint8Array<ArrayBuffer>;
  /**
   * --isochronous: the schedule (the Worker senders' own, counting into a counter block of this stream's), the frame
   * being sent, its datagrams, and the id of the one before.
   */
  private readonly frameCounts = new Float64Array(SLOTS_PER_STREAM);
  private readonly frame = { schedule: undefined as FrameSchedule | undefined, prevId: 0, id: 0, parts: [] as FramePart[], index: 0 };
  private readonly pacer: Pacer;
  private seq = 0;
  private bytes = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly startMs = performance.now();
  private stopped = false;
  private finish!: (r: ReverseResult) => void;
  readonly done = new Promise<ReverseResult>((r) => (this.finish = r));

  constructor(
    private readonly sock: Pick<UdpSocket, "closed"> & { send(data: Uint8Array, port: number, address: string): unknown },
    private readonly to: { host: string; port: number },
    size: number,
    rate: { value: number; units: "bps" | "pps" },
    private readonly amount: TestAmount,
    /**
     * `frames`: --isochronous -R, frames as the client's header asks, their fields at `at` (its own client's layout).
     * `tripTimes`: the datagrams carry our start at offset 112, as a stock server's do: a 2.1.8 client that finds
     * none there drops --trip-times and then never ends (it ignores SIGTERM too).
     */
    private readonly o: { frames?: IsochSettings & { at: number }; tripTimes?: boolean } = {},
  ) {
    const frames = o.frames;
    // The size comes from the client's header (up to 2^31-1): a datagram cannot exceed 65507 bytes, and a payload
    // sized from the header unchecked would be allocated and filled on the main thread.
    this.buf = digitsPayload(Math.min(MAX_UDP_PAYLOAD, Math.max(16, frames ? frames.at + ISOCH_PAYLOAD : 0, o.tripTimes ? UDP_TRIP_START_AT + 8 : 0, size)));
    // 20 ms of credit: main-thread timers run late under load and a shallow bucket loses rate, a deep one bursts
    // past what a stock receiver's default 208 KB buffer holds.
    const burstMs = 20;
    this.pacer = new Pacer(
      rate.value <= 0
        ? {}
        : rate.units === "pps"
          ? { packetsPerSecond: rate.value, burstPackets: Math.max(1, (rate.value * burstMs) / 1000) }
          : { bitsPerSecond: rate.value, burstBytes: Math.max(this.buf.length, (rate.value / 8) * (burstMs / 1000)) },
    );
  }

  private get frames(): (IsochSettings & { at: number }) | undefined {
    return this.o.frames;
  }

  start(): void {
    if (this.o.tripTimes) {
      const { sec, usec } = timeval(wallSeconds());
      const v = new DataView(this.buf.buffer);
      v.setUint32(UDP_TRIP_START_AT, sec);
      v.setUint32(UDP_TRIP_START_AT + 4, usec);
    }
    const f = this.frames;
    if (!f) return this.pump();
    const seconds = this.amount.kind === "time" ? this.amount.seconds : undefined;
    this.frame.schedule = new FrameSchedule({ ...f, minBytes: f.at + ISOCH_PAYLOAD, seconds }, this.frameCounts, 0, "period", wallSeconds() * 1e6);
    this.nextFrame();
  }

  /** What it has sent so far, for its Test's cuts. */
  get sent(): { bytes: number; datagrams: number; frames: number; framesMissed: number; slips: number } {
    const c = this.frameCounts;
    return { bytes: this.bytes, datagrams: this.seq, frames: c[Slot.frames]!, framesMissed: c[Slot.framesMissed]!, slips: c[Slot.slips]! };
  }

  /**
   * The next frame at its slot (a late one skips the slots it missed), as our client's Worker sends them
   * (src/worker/udp-send.ts): a timed test sends the frames whose whole period fits in it, then ends at its time.
   */
  private nextFrame = (): void => {
    this.timer = undefined;
    const f = this.frames!;
    const fr = this.frame;
    if (this.stopped) return;
    if (this.amount.kind === "bytes" && this.bytes >= this.amount.bytes) return this.stop();
    const next = fr.schedule!.next();
    if (!next) {
      this.timer = setTimeout(() => this.stop(), Math.max(0, this.startMs + (this.amount.kind === "time" ? this.amount.seconds * 1000 : 0) - performance.now()));
      return;
    }
    fr.prevId = fr.id;
    fr.id = next.id;
    fr.parts = frameParts(next.size, this.buf.length, f.at + ISOCH_PAYLOAD);
    fr.index = 0;
    runAt(next.atMs, this.sendFrame, (t) => (this.timer = t));
  };

  private sendFrame = (): void => {
    this.timer = undefined;
    const f = this.frames!;
    const fr = this.frame;
    if (this.stopped) return;
    const v = new DataView(this.buf.buffer);
    while (fr.index < fr.parts.length) {
      const p = fr.parts[fr.index++]!;
      stampIperf2Frame(v, f.at, { periodUs: fr.schedule!.periodUs, startUs: fr.schedule!.startUs, prevId: fr.prevId, id: fr.id, frameSize: p.frameSize, remaining: p.remaining });
      this.send(++this.seq, p.length);
      this.bytes += p.length;
      if (this.amount.kind === "bytes" && this.bytes >= this.amount.bytes) return this.stop();
      if (f.ipgMs > 0 && fr.index < fr.parts.length) return runAt(performance.now() + f.ipgMs, this.sendFrame, (t) => (this.timer = t));
    }
    fr.schedule!.sent();
    this.nextFrame();
  };

  private overdue(now: number): boolean {
    if (this.amount.kind === "time") return now - this.startMs >= this.amount.seconds * 1000;
    return this.bytes >= this.amount.bytes;
  }

  private pump = (): void => {
    this.timer = undefined;
    if (this.stopped) return;
    const size = this.buf.length;
    for (let i = 0; i < 256; i++) {
      const now = performance.now();
      if (this.overdue(now)) return this.stop();
      if (this.pacer.allowance(now, size) <= 0) {
        this.timer = setTimeout(this.pump, Math.max(0, this.pacer.waitMs(now, size)));
        return;
      }
      this.send(++this.seq);
      this.pacer.consume(size, 1);
      this.bytes += size;
    }
    this.timer = setTimeout(this.pump, 0);
  };

  private send(seq: number, length = this.buf.length): void {
    stampTime(this.buf, seq, wallSeconds());
    try {
      this.sock.send(length < this.buf.length ? this.buf.subarray(0, length) : this.buf, this.to.port, this.to.host);
    } catch {
      // ICMP unreachable from a client that went away: the end of the test will come by time anyway.
    }
  }

  /** Ends the stream: a FIN now and one more shortly after (the client ignores the second). */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    const fin = finSeq(this.seq);
    this.send(fin);
    const seconds = (performance.now() - this.startMs) / 1000;
    setTimeout(() => {
      if (!this.sock.closed) this.send(fin - 1);
      this.finish({ datagrams: this.seq, bytes: this.bytes, seconds });
    }, 10);
  }
}
