import { describe, expect, test } from "bun:test";
import { parseTcpInfo } from "./tcp-info.ts";
import { TcpInfo } from "./tcp-info-schema.ts";

/** A tcp_info image with each field set to a distinct value at the offsets of linux/tcp.h (checked with offsetof). */
function image(): Uint8Array {
  const b = new Uint8Array(240);
  const dv = new DataView(b.buffer);
  b[0] = 1; // ESTABLISHED
  b[1] = 4; // ca_state: loss
  b[2] = 2;
  b[6] = 0x79; // rcv_wscale 7, snd_wscale 9
  b[7] = 0x01; // delivery_rate_app_limited (bit 0; fastopen_client_fail above it)
  const u32: [number, number][] = [[8, 204000], [12, 40000], [16, 1448], [20, 536], [24, 10], [28, 4096], [32, 3], [36, 1], [60, 1500], [64, 65495], [68, 44],
    [72, 22], [76, 2147483647], [80, 10], [88, 3], [100, 5], [136, 1000], [140, 900], [144, 7], [148, 30], [192, 999], [228, 65535], [232, 131072]];
  for (const [o, v] of u32) dv.setUint32(o, v, true);
  const u64: [number, bigint][] = [[104, 123456789n], [120, 2n ** 40n], [128, 77n], [160, 5_000_000_000n], [168, 11n],
    [176, 12n], [184, 13n], [200, 2n ** 40n + 5n], [208, 1448n]];
  for (const [o, v] of u64) dv.setBigUint64(o, v, true);
  return b;
}

describe("parseTcpInfo", () => {
  test("every field at its offset", () => {
    expect(parseTcpInfo(image(), 240)).toEqual({
      state: 1, ca_state: 4, retransmits: 2, snd_wscale: 9, rcv_wscale: 7, delivery_rate_app_limited: true, rto_us: 204000, ato_us: 40000, snd_mss: 1448, rcv_mss: 536,
      unacked: 10, sacked: 4096, lost: 3, retrans: 1, pmtu: 1500, rcv_ssthresh: 65495, rtt_us: 44, rttvar_us: 22, snd_ssthresh: 2147483647, snd_cwnd: 10, reordering: 3,
      total_retrans: 5, pacing_rate: 123456789, bytes_acked: 2 ** 40, bytes_received: 77, segs_out: 1000, segs_in: 900,
      notsent_bytes: 7, min_rtt: 30, delivery_rate: 5_000_000_000, busy_time: 11, rwnd_limited: 12, sndbuf_limited: 13,
      delivered: 999, bytes_sent: 2 ** 40 + 5, bytes_retrans: 1448, snd_wnd: 65535, rcv_wnd: 131072,
    });
    expect(TcpInfo.safeParse(parseTcpInfo(image(), 240)).success).toBe(true);
  });

  test("a short struct from an older kernel leaves later fields absent", () => {
    const old = parseTcpInfo(image(), 104); // 3.x kernels stop after total_retrans
    expect(old?.total_retrans).toBe(5);
    expect(old?.pacing_rate).toBeUndefined();
    expect("bytes_acked" in old!).toBe(false);
    const v418 = parseTcpInfo(image(), 192); // before delivered
    expect(v418?.sndbuf_limited).toBe(13);
    expect(v418?.delivered).toBeUndefined();
    expect(parseTcpInfo(image(), 232)?.rcv_wnd).toBeUndefined();
  });

  test("nothing filled -> undefined", () => {
    expect(parseTcpInfo(image(), 0)).toBeUndefined();
    expect(parseTcpInfo(new Uint8Array(0), 100)).toBeUndefined();
  });
});
