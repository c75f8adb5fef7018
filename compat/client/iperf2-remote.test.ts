import { describe, expect, test } from "bun:test";
import { decodeServerReport, encodeServerReport } from "../../interop/iperf2/server-report.ts";
import { iperf2Remote } from "./iperf2-remote.ts";

const phases = { warmup_s: 0, measured_s: 1, cooldown_s: 0 };
// iperf2-udp.txt's report (docs/protocols/iperf2.md §3.3): the stock client printed
// "0.0000-1.0210 sec 134 KBytes 1.07 Mbits/sec 0.012 ms 0/93 (0%)".
const captured = decodeServerReport(encodeServerReport({ flags: 0x88000000, totalBytes: 136710, duration: 1.02098, lost: 0, outOfOrder: 0, datagrams: 93, jitter: 0.000012 }));

describe("iperf2Remote", () => {
  test("a UDP report is the stream's figures as the stock client prints them", () => {
    const r = iperf2Remote([captured], 1, phases, "2.1.8");
    expect(r.peer).toEqual({ name: "iperf", version: "2.1.8" });
    const s = r.streams[0]!;
    expect(s).toMatchObject({ id: 1, side: "recv", bytes: 136710, seconds: 1.02098, packets: 93, lost: 0, loss_percent: 0, out_of_order: 0 });
    expect((s.throughput_bps / 1e6).toFixed(2)).toBe("1.07");
    expect(s.jitter_ms!.toFixed(3)).toBe("0.012");
    expect(r.summary).toMatchObject({ bytes: 136710, packets: 93, lost: 0, out_of_order: 0 });
    expect(r.errors).toEqual([]);
  });

  test("streams sum; jitter is their mean; a missing report is said", () => {
    const other = { ...captured, lost: 5, datagrams: 51, outOfOrder: 1, jitter: 0.000020 };
    const r = iperf2Remote([captured, undefined, other], 3, phases, undefined);
    expect(r.peer).toEqual({ name: "iperf" });
    expect(r.streams.map((s) => s.id)).toEqual([1, 3]);
    expect(r.summary).toMatchObject({ bytes: 2 * 136710, packets: 144, lost: 5, out_of_order: 1 });
    expect(r.summary!.jitter_ms).toBeCloseTo(0.016, 9);
    expect(r.errors).toEqual(["the server reported 2 of 3 streams"]);
  });

  test("TCP (or the server sending): no figures at all, not zeros", () => {
    const r = iperf2Remote([], 0, phases, "2.2.1");
    expect(r.summary).toBeUndefined();
    expect(r.streams).toEqual([]);
    expect(r.totals).toEqual({});
    expect(r.cpu).toEqual({});
    expect(r.errors).toEqual([]);
  });
});
