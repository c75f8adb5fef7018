import { Slot } from "../counters.ts";
import type { Sockopt } from "../sockopt/sockopt.ts";
import { readSocketBuffers } from "./sockets.ts";
import type { StreamContext } from "./context.ts";

/**
 * Per-stream TCP_INFO: the Worker that owns the sockets reads them (1.2 µs each) and publishes RTT, cwnd and
 * retransmits into the stream's counters, so every front end gets iperf3-style per-stream figures for free.
 */
export class TcpInfoSampler {
  /** Last total_retrans seen per fd; a socket that closed keeps its share in `closedRetrans`. */
  private readonly last = new Map<number, number>();
  private closedRetrans = 0;

  constructor(private readonly sockopt: Sockopt, private readonly ctx: StreamContext) {}

  /**
   * The first socket's TCP_INFO also goes to the main thread at every sample, so a stream whose socket closed on its
   * own (the peer's EOF) still has the last one there.
   */
  sample(fds: readonly number[]): void {
    let rtt = 0, n = 0, cwnd = 0, retrans = 0;
    const seen = new Set<number>();
    for (const fd of fds) {
      const info = this.sockopt.tcpInfo(fd);
      if (!info) continue;
      if (n === 0) this.ctx.tcpInfo(info, readSocketBuffers(this.sockopt, fd));
      seen.add(fd);
      const r = info.total_retrans ?? 0;
      this.last.set(fd, r);
      rtt += info.rtt_us ?? 0;
      cwnd += info.snd_cwnd ?? 0;
      retrans += r;
      n++;
    }
    for (const [fd, r] of this.last) {
      if (seen.has(fd)) continue;
      this.closedRetrans += r;
      this.last.delete(fd);
    }
    const { c, o } = this.ctx;
    if (n > 0) {
      c[o + Slot.tcpRttUs] = rtt / n;
      c[o + Slot.tcpCwnd] = cwnd;
    }
    c[o + Slot.tcpRetrans] = this.closedRetrans + retrans;
  }
}
