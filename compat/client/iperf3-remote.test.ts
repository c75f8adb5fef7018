import { describe, expect, test } from "bun:test";
import { decodeResults } from "../../interop/iperf3/results.ts";
import { iperf3Remote, iperf3Version } from "./iperf3-remote.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const phases = { warmup_s: 0, measured_s: 2, cooldown_s: 0 };

describe("iperf3Remote", () => {
  test("a 3.12 server's receiving half (docs/protocols/iperf3.md §7): its bytes over its stream's seconds, its CPU; retransmits absent", () => {
    const peer = decodeResults(enc('{"cpu_util_total":3.59008798333873,"cpu_util_user":0,"cpu_util_system":3.5901379511594533,"sender_has_retransmits":18446744073709551615,"streams":[{"id":1,"bytes":5111808,"retransmits":18446744073709551615,"jitter":0,"errors":0,"packets":0,"start_time":0,"end_time":2.000101}]}'));
    const r = iperf3Remote(peer, { protocol: "tcp", parallel: 1, reverse: false, bidirectional: false }, phases, undefined);
    expect(r.peer).toEqual({ name: "iperf3" });
    expect(r.streams).toEqual([{ id: 1, side: "recv", connections: 1, bytes: 5111808, seconds: 2.000101, throughput_bps: (5111808 * 8) / 2.000101 }]);
    expect(r.summary!.bytes).toBe(5111808);
    expect(r.totals).toEqual({ sent_bytes: undefined, received_bytes: 5111808 });
    expect(r.cpu).toEqual({ process_percent: 3.59008798333873 });
    expect(r.retransmits).toBeUndefined();
    expect(r.sender).toBeUndefined();
  });

  test("--bidir -P 2 over UDP: the server sends on streams 4 and 5, receives on 1 and 3 (loss and jitter), both sums", () => {
    const stream = (id: number, bytes: number, errors: number, jitter: number) => `{"id":${id},"bytes":${bytes},"retransmits":-1,"jitter":${jitter},"errors":${errors},"packets":${bytes / 1000},"start_time":0,"end_time":1}`;
    const peer = decodeResults(enc(`{"cpu_util_total":1,"cpu_util_user":0.5,"cpu_util_system":0.5,"sender_has_retransmits":0,"streams":[${stream(1, 100000, 2, 0.001)},${stream(3, 200000, 0, 0.003)},${stream(4, 300000, 0, 0)},${stream(5, 400000, 0, 0)}]}`));
    const r = iperf3Remote(peer, { protocol: "udp", parallel: 2, reverse: false, bidirectional: true }, phases, "3.18");
    expect(r.peer).toEqual({ name: "iperf3", version: "3.18" });
    expect(r.streams.map((s) => s.side)).toEqual(["recv", "recv", "send", "send"]);
    expect(r.receiver).toMatchObject({ bytes: 300000, packets: 300, lost: 2, jitter_ms: 2 });
    expect(r.receiver!.loss_percent).toBeCloseTo((100 * 2) / 300, 9);
    expect(r.sender).toMatchObject({ bytes: 700000, packets: 700 });
    expect(r.sender!.lost).toBeUndefined();
    expect(r.summary).toEqual(r.receiver!);
  });

  test("the version comes from the server's own JSON output, when it sent one", () => {
    const base = '{"cpu_util_total":1,"cpu_util_user":0,"cpu_util_system":1,"sender_has_retransmits":0,"streams":[]';
    expect(iperf3Version(decodeResults(enc(`${base},"server_output_json":{"start":{"version":"iperf 3.12"}}}`)))).toBe("3.12");
    expect(iperf3Version(decodeResults(enc(`${base}}`)))).toBeUndefined();
  });
});
