import { describe, expect, test } from "bun:test";
import { TcpState } from "../../src/sockopt/constants.ts";
import type { TcpInfo } from "../../src/sockopt/tcp-info.ts";
import { TcpStatsTracker, tcpInit } from "./tcp-stats.ts";

const info = (o: Partial<TcpInfo>): TcpInfo => ({ state: TcpState.ESTABLISHED, snd_mss: 32741, snd_cwnd: 10, rtt_us: 28, rttvar_us: 14, total_retrans: 0, ...o });

describe("TCP_INFO figures as iperf 2 prints them", () => {
  test("icwnd is segments · MSS in KBytes, rounded down (stock loopback: 319/32741 client, 320/32768 server)", () => {
    expect(tcpInit(info({}))).toEqual({ cwndK: 319, mss: 32741, rttUs: 28 });
    expect(tcpInit(info({ snd_mss: 32768, rtt_us: 17 }))).toEqual({ cwndK: 320, mss: 32768, rttUs: 17 });
    expect(tcpInit(undefined)).toBeUndefined();
    expect(tcpInit({ state: TcpState.ESTABLISHED })).toBeUndefined();
  });

  test("interval reports count retransmits since the previous report; the final one since the start", () => {
    const samples = [info({ total_retrans: 3, snd_cwnd: 36 }), info({ total_retrans: 10, snd_cwnd: 40, rtt_us: 55, rttvar_us: 18 }), info({ total_retrans: 12 })];
    let i = 0;
    const t = new TcpStatsTracker(() => samples[Math.min(i++, samples.length - 1)]);
    expect(t.interval()).toEqual({ retry: 3, cwndK: Math.floor((36 * 32741) / 1024), rttUs: 28, rttVarUs: 14 });
    expect(t.interval()).toEqual({ retry: 7, cwndK: Math.floor((40 * 32741) / 1024), rttUs: 55, rttVarUs: 18 });
    expect(t.final().retry).toBe(12);
  });

  test("the final report takes cwnd/RTT from the last established sample, not from the FIN exchange", () => {
    let now = info({ snd_cwnd: 36, rtt_us: 33, rttvar_us: 8 });
    const t = new TcpStatsTracker(() => now);
    t.settle();
    now = info({ state: TcpState.FIN_WAIT2, snd_cwnd: 24, rtt_us: 2004, rttvar_us: 3834, total_retrans: 1 });
    expect(t.final()).toEqual({ retry: 1, cwndK: Math.floor((36 * 32741) / 1024), rttUs: 33, rttVarUs: 8 });
  });

  test("an unreadable socket gives the NA form", () => {
    const t = new TcpStatsTracker(() => undefined);
    expect(t.interval()).toEqual({ retry: 0, cwndK: null, rttUs: 0, rttVarUs: 0 });
    expect(t.final()).toEqual({ retry: 0, cwndK: null, rttUs: 0, rttVarUs: 0 });
  });
});
