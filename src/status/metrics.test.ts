import { describe, expect, test } from "bun:test";
import { bpsOf, fakeSource } from "../../tests/fixtures/status/fake-run.ts";
import { buildStatusDocument } from "./document.ts";
import { MemorySource } from "./memory-source.ts";
import { dialectOf, peerAddress, renderMetrics, SHOWN_AFTER_DONE_S } from "./metrics.ts";
import { REVISION, VERSION } from "../version.ts";
import { TestRunSource } from "./test-run-source.ts";
import { StandIn, tcp, tcpInterval } from "../../tests/fixtures/status/stand-in-run.ts";

/** Parses the exposition into "name{labels}" -> value, and the TYPE of each family. */
function parse(text: string): { values: Map<string, number>; types: Map<string, string>; helps: Set<string> } {
  const values = new Map<string, number>();
  const types = new Map<string, string>();
  const helps = new Set<string>();
  for (const line of text.split("\n")) {
    if (line === "") continue;
    const t = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (t) types.set(t[1]!, t[2]!);
    const h = /^# HELP (\S+) .+$/.exec(line);
    if (h) helps.add(h[1]!);
    if (line.startsWith("#")) continue;
    const m = /^(\S+?(?:\{.*\})?) (\S+)$/.exec(line);
    if (!m) throw new Error(`bad sample line: ${line}`);
    values.set(m[1]!, Number(m[2]));
  }
  return { values, types, helps };
}

const NOW = new Date("2026-12-02T10:00:05.000Z");

describe("renderMetrics", () => {
  test("a TCP test: per-stream counters and gauges in base units", () => {
    const { source, run } = fakeSource({ intervals: 10 });
    for (let i = 0; i < 4; i++) run.step();
    const text = renderMetrics(buildStatusDocument(source, NOW));
    expect(text.endsWith("\n")).toBe(true);
    const { values, types, helps } = parse(text);
    const p = 'mode="loopback",role="both"';
    const l = 'dialect="loopback",role="both",test="t1"';
    const view = run.view("measuring");
    expect(values.get(`anyperf_bytes_total{${l},stream="0"}`)).toBe(view.streams[0]!.bytes);
    // TCP has no datagrams: no packet series that would read 0 (its HELP says UDP).
    expect(types.has("anyperf_packets_total")).toBe(false);
    expect(values.get(`anyperf_tests_running{${p}}`)).toBe(1);
    expect(values.get(`anyperf_bytes_total{${l},stream="1"}`)).toBe(view.streams[1]!.bytes);
    expect(values.get(`anyperf_throughput_bytes_per_second{${l},stream="1"}`)).toBe(bpsOf(3, 1) / 8);
    expect(values.get(`anyperf_average_throughput_bytes_per_second{${l}}`)).toBe(view.throughput.average / 8);
    expect(values.get(`anyperf_elapsed_seconds{${l}}`)).toBe(4);
    expect(values.get(`anyperf_remaining_seconds{${l}}`)).toBe(6);
    expect(values.get(`anyperf_test_start_time_seconds{${l}}`)).toBe(Date.parse(view.startedAt) / 1000);
    expect(values.get(`anyperf_cpu_busy_ratio{${l},scope="host"}`)).toBe(0.425);
    expect(values.get(`anyperf_cpu_busy_ratio{${l},scope="process"}`)).toBe(0.97);
    expect(values.get(`anyperf_retransmits_total{${l}}`)).toBe(1);
    expect(values.get(`anyperf_test_phase{${p},phase="measuring"}`)).toBe(1);
    for (const ph of ["waiting", "warm-up", "cool-down", "done"]) expect(values.get(`anyperf_test_phase{${p},phase="${ph}"}`)).toBe(0);
    // Only what applies: no transactions, latency or loss for a TCP bulk test.
    expect(types.has("anyperf_transactions_total")).toBe(false);
    expect(types.has("anyperf_latency_seconds")).toBe(false);
    expect(types.has("anyperf_lost_packets_total")).toBe(false);
    expect(types.get("anyperf_bytes_total")).toBe("counter");
    expect(types.get("anyperf_throughput_bytes_per_second")).toBe("gauge");
    expect([...types.keys()].sort()).toEqual([...helps].sort());
  });

  test("request/response: a latency histogram in seconds whose count is the transactions counter", () => {
    const { source, run } = fakeSource({ intervals: 10, rr: true, mode: "netperf", role: "client" });
    for (let i = 0; i < 2; i++) run.step();
    const { values, types } = parse(renderMetrics(buildStatusDocument(source, NOW)));
    const l = 'dialect="netperf",role="client",test="t1",peer="127.0.0.1"';
    expect(types.get("anyperf_latency_seconds")).toBe("histogram");
    expect(values.get(`anyperf_latency_seconds_bucket{${l},le="0.00001"}`)).toBe(0);
    expect(values.get(`anyperf_latency_seconds_bucket{${l},le="0.00002"}`)).toBe(80_000);
    expect(values.get(`anyperf_latency_seconds_bucket{${l},le="10"}`)).toBe(100_000);
    expect(values.get(`anyperf_latency_seconds_bucket{${l},le="+Inf"}`)).toBe(100_000);
    expect(values.get(`anyperf_latency_seconds_count{${l}}`)).toBe(100_000);
    expect(values.get(`anyperf_latency_seconds_sum{${l}}`)).toBeCloseTo(100_000 * 18.5e-6, 12);
    expect(values.get(`anyperf_transactions_per_second{${l}}`)).toBe(50_001);
    // One counter per test, of the window and side the histogram counts: not per stream, not since warm-up.
    expect(values.get(`anyperf_transactions_total{${l}}`)).toBe(values.get(`anyperf_latency_seconds_count{${l}}`)!);
    expect([...values.keys()].filter((k) => k.startsWith("anyperf_transactions_total")).length).toBe(1);
  });

  test("UDP: packets/s, loss and jitter", () => {
    const { source, run } = fakeSource({ intervals: 10, udp: true, mode: "iperf3", role: "server" });
    for (let i = 0; i < 3; i++) run.step();
    const { values, types } = parse(renderMetrics(buildStatusDocument(source, NOW)));
    const l = 'dialect="iperf3",role="server",test="t1",peer="127.0.0.1"';
    expect(values.get(`anyperf_packets_total{${l},stream="0"}`)).toBe(run.view("measuring").streams[0]!.packets);
    expect(types.get("anyperf_packets_total")).toBe("counter");
    expect(values.get(`anyperf_packets_per_second{${l}}`)).toBe(200_002);
    expect(values.get(`anyperf_lost_packets_total{${l}}`)).toBe(9);
    expect(values.get(`anyperf_jitter_seconds{${l},stream="0"}`)).toBe(0.00025);
    expect(types.has("anyperf_retransmits_total")).toBe(false);
  });

  test("no test yet: only the phase, with the process's labels", () => {
    const source = new MemorySource({ mode: "netserver", role: "server", persistent: true });
    const { values } = parse(renderMetrics(buildStatusDocument(source, NOW)));
    expect(values.get('anyperf_test_phase{mode="netserver",role="server",phase="waiting"}')).toBe(1);
    for (const d of ["sent", "received", "both"]) expect(values.get(`anyperf_process_bytes_total{mode="netserver",role="server",direction="${d}"}`)).toBe(0);
    expect(values.get('anyperf_tests_running{mode="netserver",role="server"}')).toBe(0);
    expect(values.get(`anyperf_build_info{version="${VERSION}",revision="${REVISION}"}`)).toBe(1);
    expect(values.size).toBe(10);
  });

  test("label values are escaped", () => {
    const { source, run } = fakeSource({ intervals: 2, mode: 'we"ird\\mode\nx' });
    run.step();
    const text = renderMetrics(buildStatusDocument(source, NOW));
    expect(text).toContain('anyperf_elapsed_seconds{dialect="we\\"ird\\\\mode\\nx",role="both",test="t1",peer="127.0.0.1"} 1\n');
  });

  test("streams that say which end they are carry a side and a direction label; process bytes by direction", () => {
    const source = new TestRunSource({ mode: "loopback", role: "both" });
    const run = new StandIn(tcp);
    source.add(run);
    run.setPhase("measuring");
    run.interval(tcpInterval("measuring", 5000));
    const { values } = parse(renderMetrics(buildStatusDocument(source, NOW)));
    expect(values.get('anyperf_bytes_total{dialect="loopback",role="both",test="1",peer="127.0.0.1",stream="0",side="send",direction="sent"}')).toBe(5100);
    expect(values.get('anyperf_bytes_total{dialect="loopback",role="both",test="1",peer="127.0.0.1",stream="1",side="recv",direction="received"}')).toBe(5000);
    expect(values.get('anyperf_process_bytes_total{mode="loopback",role="both",direction="sent"}')).toBe(5100);
    expect(values.get('anyperf_process_bytes_total{mode="loopback",role="both",direction="received"}')).toBe(5000);
  });

  test("--label values lead every series, process-wide and per test, and /status carries them", () => {
    const source = new TestRunSource({ mode: "iperf3", role: "server", persistent: true, labels: { node: "worker-1", zone: "a" } });
    const run = new StandIn(tcp);
    source.add(run);
    run.setPhase("measuring");
    run.interval(tcpInterval("measuring", 5000));
    const doc = buildStatusDocument(source, NOW);
    expect(doc.labels).toEqual({ node: "worker-1", zone: "a" });
    const text = renderMetrics(doc);
    const { values } = parse(text);
    expect(values.get('anyperf_test_phase{node="worker-1",zone="a",mode="iperf3",role="server",phase="measuring"}')).toBe(1);
    expect(values.get('anyperf_bytes_total{node="worker-1",zone="a",dialect="loopback",role="both",test="1",peer="127.0.0.1",stream="1",side="recv",direction="received"}')).toBe(5000);
    for (const line of text.split("\n")) if (line !== "" && !line.startsWith("#")) expect(line).toContain('{node="worker-1",zone="a",');
  });

  test("bounded labels: the peer without its port, a finished test's series gone SHOWN_AFTER_DONE_S after it ended", () => {
    expect(peerAddress("10.66.0.2:51784")).toBe("10.66.0.2");
    expect(peerAddress("[fd00::2]:5201")).toBe("fd00::2");
    expect(peerAddress("fd00::2")).toBe("fd00::2");
    expect(peerAddress("worker-1")).toBe("worker-1");
    const { source, run } = fakeSource({ intervals: 2, mode: "iperf3", role: "server", persistent: true });
    run.step();
    run.step();
    // Started 10:00:00, 2 s long: ended 10:00:02.
    const at = (s: number) => parse(renderMetrics(buildStatusDocument(source, new Date(Date.parse("2026-12-02T10:00:02.000Z") + s * 1000)))).values;
    expect(at(SHOWN_AFTER_DONE_S).get('anyperf_elapsed_seconds{dialect="iperf3",role="server",test="t1",peer="127.0.0.1"}')).toBe(2);
    const later = at(SHOWN_AFTER_DONE_S + 1);
    expect([...later.keys()].some((k) => k.includes('test="'))).toBe(false);
    expect(later.get('anyperf_tests_running{mode="iperf3",role="server"}')).toBe(0);
  });

  test("one dialect vocabulary: netserver's tests are the netperf dialect, the process's command is its mode", () => {
    expect(dialectOf("netserver")).toBe("netperf");
    expect(dialectOf("native")).toBe("native");
    expect(dialectOf("client")).toBe("native");
    const { source, run } = fakeSource({ intervals: 3, mode: "netserver", role: "server", persistent: true });
    run.step();
    const { values } = parse(renderMetrics(buildStatusDocument(source, NOW)));
    expect(values.get('anyperf_elapsed_seconds{dialect="netperf",role="server",test="t1",peer="127.0.0.1"}')).toBe(1);
    expect(values.get('anyperf_test_phase{mode="netserver",role="server",phase="measuring"}')).toBe(1);
  });
});
