import { Pacer } from "../../src/pacer.ts";
import type { UdpSocket } from "../../src/net/types.ts";
import type { TestAmount } from "../../interop/iperf2/client-request.ts";
import { digitsPayload, finSeq, stampIperf2 } from "../../interop/iperf2/datagram.ts";

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
  private readonly buf: Uint8Array;
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
  ) {
    // The size comes from the client's header (up to 2^31-1): a datagram cannot exceed 65507 bytes, and a payload
    // sized from the header unchecked would be allocated and filled on the main thread.
    this.buf = digitsPayload(Math.min(MAX_UDP_PAYLOAD, Math.max(16, size)));
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

  start(): void {
    this.pump();
  }

  /** What it has sent so far, for its Test's cuts. */
  get sent(): { bytes: number; datagrams: number } {
    return { bytes: this.bytes, datagrams: this.seq };
  }

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

  private send(seq: number): void {
    const w = wallSeconds();
    const sec = Math.floor(w);
    stampIperf2(this.buf, seq, sec, Math.min(999999, Math.round((w - sec) * 1e6)));
    try {
      this.sock.send(this.buf, this.to.port, this.to.host);
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
