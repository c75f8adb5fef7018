import { TcpState } from "../../src/sockopt/constants.ts";
import type { TcpInfo } from "../../src/sockopt/tcp-info.ts";

/**
 * The TCP_INFO figures iperf 2 prints: "(icwnd/mss/irtt=319/32741/28)" on connection lines and, for -e senders,
 * "Rtry  Cwnd/RTT(var)" per report. cwnd is shown in KBytes (segments · MSS / 1024, rounded down), RTTs in µs.
 */

export interface TcpInit {
  cwndK: number;
  mss: number;
  rttUs: number;
}

/** The connection line's figures from TCP_INFO read right after connect or accept; undefined if the kernel gave none. */
export function tcpInit(info: TcpInfo | undefined): TcpInit | undefined {
  if (info?.snd_cwnd === undefined || info.snd_mss === undefined || info.rtt_us === undefined) return undefined;
  return { cwndK: Math.floor((info.snd_cwnd * info.snd_mss) / 1024), mss: info.snd_mss, rttUs: info.rtt_us };
}

/** One -e sender report's TCP columns; cwndK null when TCP_INFO could not be read (iperf prints "NA"). */
export interface TcpWriteStats {
  retry: number;
  cwndK: number | null;
  rttUs: number;
  rttVarUs: number;
}

/**
 * Samples a sending socket's TCP_INFO for -e reports: retransmits since the previous interval report (or since the
 * start, for the final one), and cwnd/RTT as they are at the moment of the report. Once the connection is closing
 * its RTT and cwnd describe the FIN exchange, not the test, so the final report uses the last sample taken while it
 * was established (take one with `settle()` when sending stops).
 */
export class TcpStatsTracker {
  private lastRetrans = 0;
  private established: TcpInfo | undefined;

  constructor(private readonly read: () => TcpInfo | undefined) {}

  private current(): TcpInfo | undefined {
    const info = this.read();
    if (info?.state === TcpState.ESTABLISHED) this.established = info;
    return info;
  }

  /** Sending is over: remember the socket as it is now, before the FIN exchange. */
  settle(): void {
    this.current();
  }

  private stats(info: TcpInfo | undefined, retransSince: number): TcpWriteStats & { total: number } {
    if (info?.total_retrans === undefined || info.snd_cwnd === undefined || info.snd_mss === undefined) {
      return { retry: 0, cwndK: null, rttUs: info?.rtt_us ?? 0, rttVarUs: info?.rttvar_us ?? 0, total: retransSince };
    }
    return {
      retry: Math.max(0, info.total_retrans - retransSince),
      cwndK: Math.floor((info.snd_cwnd * info.snd_mss) / 1024),
      rttUs: info.rtt_us ?? 0,
      rttVarUs: info.rttvar_us ?? 0,
      total: info.total_retrans,
    };
  }

  interval(): TcpWriteStats {
    const { total, ...s } = this.stats(this.current(), this.lastRetrans);
    this.lastRetrans = total;
    return s;
  }

  final(): TcpWriteStats {
    const now = this.current();
    const window = now?.state === TcpState.ESTABLISHED ? now : (this.established ?? now);
    // Retransmits keep counting through the close; the window figures come from the established socket.
    const { total: _, ...s } = this.stats(window, 0);
    return { ...s, retry: now?.total_retrans ?? s.retry };
  }
}
