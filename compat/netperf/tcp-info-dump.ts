import type { TcpInfo } from "../../src/sockopt/tcp-info.ts";

/**
 * netperf's dump_tcp_info: with DUMP_TCP_INFO in the environment (any value, even empty) netperf and netserver
 * print the data socket's TCP_INFO on stderr when they read its retransmits at the end of a TCP test. The
 * "tpci_snd_cwnd" typo is netperf's.
 */
export function wantsTcpInfoDump(env: Record<string, string | undefined>): boolean {
  return env.DUMP_TCP_INFO !== undefined;
}

export function tcpInfoDump(i: TcpInfo): string {
  const n = (v: number | undefined) => v ?? 0;
  return (
    `tcpi_rto ${n(i.rto_us)} tcpi_ato ${n(i.ato_us)} tcpi_pmtu ${n(i.pmtu)} tcpi_rcv_ssthresh ${n(i.rcv_ssthresh)}\n` +
    `tcpi_rtt ${n(i.rtt_us)} tcpi_rttvar ${n(i.rttvar_us)} tcpi_snd_ssthresh ${n(i.snd_ssthresh)} tpci_snd_cwnd ${n(i.snd_cwnd)}\n` +
    `tcpi_reordering ${n(i.reordering)} tcpi_total_retrans ${n(i.total_retrans)}\n`
  );
}

/** netperf's TRANSPORT_MSS: TCP_MAXSEG of the data socket (TCP_INFO's snd_mss is the same mss_cache), -1 without. */
export function transportMss(protocol: "tcp" | "udp", info: TcpInfo | undefined): number {
  return protocol === "tcp" ? (info?.snd_mss ?? -1) : -1;
}
