import type { TcpInfo } from "./tcp-info-schema.ts";

export type { TcpInfo };


type WordField = Exclude<keyof TcpInfo, "state" | "ca_state" | "retransmits" | "snd_wscale" | "rcv_wscale" | "delivery_rate_app_limited">;
type Field = [name: WordField, offset: number, size: 4 | 8];

const FIELDS: Field[] = [
  ["rto_us", 8, 4],
  ["ato_us", 12, 4],
  ["snd_mss", 16, 4],
  ["rcv_mss", 20, 4],
  ["unacked", 24, 4],
  ["sacked", 28, 4],
  ["lost", 32, 4],
  ["retrans", 36, 4],
  ["pmtu", 60, 4],
  ["rcv_ssthresh", 64, 4],
  ["rtt_us", 68, 4],
  ["rttvar_us", 72, 4],
  ["snd_ssthresh", 76, 4],
  ["snd_cwnd", 80, 4],
  ["reordering", 88, 4],
  ["total_retrans", 100, 4],
  ["pacing_rate", 104, 8],
  ["bytes_acked", 120, 8],
  ["bytes_received", 128, 8],
  ["segs_out", 136, 4],
  ["segs_in", 140, 4],
  ["notsent_bytes", 144, 4],
  ["min_rtt", 148, 4],
  ["delivery_rate", 160, 8],
  ["busy_time", 168, 8],
  ["rwnd_limited", 176, 8],
  ["sndbuf_limited", 184, 8],
  ["delivered", 192, 4],
  ["bytes_sent", 200, 8],
  ["bytes_retrans", 208, 8],
  ["snd_wnd", 228, 4],
  ["rcv_wnd", 232, 4],
];

/** Bytes to offer the kernel: more than any kernel's struct today, so nothing new is cut off. */
export const TCP_INFO_BUFFER = 512;

/** Decodes the first `length` bytes the kernel filled (little-endian host); undefined if it filled none. */
export function parseTcpInfo(bytes: Uint8Array, length: number): TcpInfo | undefined {
  const len = Math.min(length, bytes.length);
  if (len < 1) return undefined;
  const dv = new DataView(bytes.buffer, bytes.byteOffset, len);
  const info: TcpInfo = { state: bytes[0] as number };
  if (len >= 2) info.ca_state = bytes[1] as number;
  if (len >= 3) info.retransmits = bytes[2] as number;
  if (len >= 7) {
    info.snd_wscale = (bytes[6] as number) & 0x0f;
    info.rcv_wscale = (bytes[6] as number) >> 4;
  }
  if (len >= 8) info.delivery_rate_app_limited = ((bytes[7] as number) & 1) === 1;
  for (const [name, offset, size] of FIELDS) {
    if (offset + size > len) continue;
    info[name] = size === 4 ? dv.getUint32(offset, true) : Number(dv.getBigUint64(offset, true));
  }
  return info;
}
