import { describe, expect, test } from "bun:test";
import { wholeRun } from "./whole-run.ts";
import type { HostResult } from "../report/result.ts";

const host = (port: number, summary?: HostResult["summary"], error?: string): HostResult => ({ host: "192.0.2.1", port, peer: "anyperf", summary, error });

describe("wholeRun: the whole run from its servers' figures", () => {
  test("TCP: bytes and rates summed, retransmits summed, the common window's seconds", () => {
    const f = wholeRun([host(1, { bytes: 1000, seconds: 2.001, throughput_bps: 4000, retransmits: 3 }), host(2, { bytes: 3000, seconds: 1.999, throughput_bps: 12000, retransmits: 1 })], 2, { transport: "tcp", test: "stream" });
    expect(f).toEqual({ bytes: 4000, seconds: 2, throughput_bps: 16000, retransmits: 4 });
  });

  test("UDP: packets and pkt/s summed, loss over every datagram of every server", () => {
    const f = wholeRun(
      [host(1, { bytes: 100, seconds: 1, throughput_bps: 800, packets: 90, packets_per_second: 90, lost: 10, loss_percent: 10, out_of_order: 1 }), host(2, { bytes: 100, seconds: 1, throughput_bps: 800, packets: 290, packets_per_second: 290, lost: 10, loss_percent: 3.33, out_of_order: 0 })],
      1,
      { transport: "udp", test: "stream" },
    );
    expect(f).toMatchObject({ packets: 380, packets_per_second: 380, lost: 20, out_of_order: 1 });
    expect(f.loss_percent).toBeCloseTo(5, 10);
  });

  test("a server without figures (refused, dropped out) is left out; none leaves zeros, not absent fields", () => {
    const f = wholeRun([host(1, { bytes: 10, seconds: 1, throughput_bps: 80, transactions: 5, transactions_per_second: 5 }), host(2, undefined, "refused")], 1, { transport: "tcp", test: "rr" });
    expect(f).toEqual({ bytes: 10, seconds: 1, throughput_bps: 80, transactions: 5, transactions_per_second: 5 });
    expect(wholeRun([host(2, undefined, "refused")], 0, { transport: "tcp", test: "stream" })).toEqual({ bytes: 0, seconds: 0, throughput_bps: 0 });
  });
});
