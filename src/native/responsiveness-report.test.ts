import { describe, expect, test } from "bun:test";
import { Results, type Figures, type StreamFigures } from "../report/result.ts";
import type { TcpPath } from "../diagnosis/schema.ts";
import type { BacklogSeen } from "../host/backlog-seen.ts";
import { Responsiveness, phaseFigures, queueEvidence, responsiveness, responsivenessText } from "./responsiveness-report.ts";
import { PING_GAP_MS, pingPlan, probePlan, PROBE_GAP_MS } from "./responsiveness.ts";
import { RrClientSpec } from "../stream-spec.ts";
import { senders } from "../plan-streams.ts";
import { Plan } from "../plan.ts";

const figures = (f: Partial<Figures> = {}): Figures => ({ bytes: 0, seconds: 3, throughput_bps: 0, ...f });
const stream = (id: number, side: StreamFigures["side"], bps: number): StreamFigures => ({ ...figures({ throughput_bps: bps }), id, side, connections: 1 });
const path = (srtt: number, minRtt: number): TcpPath => ({ streams: 4, elapsed_us: 1, busy_us: 1, rwnd_limited_us: 0, sndbuf_limited_us: 0, srtt_us: srtt, min_rtt_us: minRtt });

function results(r: { summary?: Partial<Figures>; streams?: StreamFigures[]; path?: TcpPath; remote?: { streams: StreamFigures[]; path?: TcpPath; qdisc?: BacklogSeen } }): Results {
  const core = { version: "0", role: "client", phases: { warmup_s: 0, measured_s: 3, cooldown_s: 0 }, summary: figures(r.summary), totals: {}, streams: r.streams ?? [], cpu: {}, errors: [] };
  return Results.parse({
    ...core, tool: "anyperf", mode: "client", transport: "tcp", test: "stream", started_at: "2026-12-04T17:00:00Z", interrupted: false, intervals: [],
    ...(r.path ? { tcp_path: r.path } : {}),
    ...(r.remote ? { remote: { ...core, role: "server", streams: r.remote.streams, ...(r.remote.path ? { tcp_path: r.remote.path } : {}), ...(r.remote.qdisc ? { qdisc: r.remote.qdisc } : {}) } } : {}),
  });
}

/** A probe's results: its transactions' latency percentiles, µs. */
const probe = (p50: number, p90: number, p99: number) =>
  results({ summary: { transactions: 600, transactions_per_second: 200, latency_us: { mean: p50, min: p50 / 2, max: p99 * 2, p50, p90, p99, p999: p99 } } });

describe("--responsiveness's phases", () => {
  const idle = phaseFigures(probe(80, 120, 300), undefined, undefined);

  test("idle: the probe's percentiles and RPM, no load, nothing added", () => {
    expect(idle).toEqual({ throughput_bps: 0, upload_bps: 0, download_bps: 0, latency_us: { p50: 80, p90: 120, p99: 300 }, transactions: 600, rpm: 750_000, queueing_delay_us: {} });
  });

  test("upload: what the server received, the queue read from our senders, the probe's p50 over idle", () => {
    const load = results({ streams: [stream(0, "send", 48e6)], path: path(45_080, 80), remote: { streams: [stream(0, "recv", 24e6), stream(1, "recv", 23.5e6)] } });
    const p = phaseFigures(probe(43_280, 60_000, 90_000), load, idle);
    expect(p.upload_bps).toBe(47.5e6);
    expect(p.download_bps).toBe(0);
    expect(p.throughput_bps).toBe(47.5e6);
    expect(p.added_latency_us).toBe(43_200);
    // 60 s / 43.28 ms
    expect(p.rpm).toBeCloseTo(1386.32, 2);
    expect(p.queueing_delay_us).toEqual({ upload: 45_000 });
    expect(queueEvidence("upload", p)).toBe("upload: client → server (upload) queue grew: its flows' RTT 45.00 ms over their minimum; the probe's p50 +43.20 ms over idle");
  });

  test("bidir: both directions' rates and queues; the document's RPM is bidir's", () => {
    const load = results({ streams: [stream(0, "send", 1), stream(1, "recv", 40e6)], path: path(30_100, 100), remote: { streams: [stream(0, "recv", 45e6), stream(1, "send", 1)], path: path(600, 100) } });
    const p = phaseFigures(probe(31_000, 40_000, 50_000), load, idle);
    expect([p.upload_bps, p.download_bps, p.throughput_bps]).toEqual([45e6, 40e6, 85e6]);
    expect(p.queueing_delay_us).toEqual({ upload: 30_000, download: 500 });
    // Both ways loaded, each flow's ACKs wait in the other direction's queue: its RTT is not one direction's.
    expect(queueEvidence("bidir", p)).toBe("bidir: queues grew: the upload flows' RTT 30.00 ms, the download flows' RTT 500.0 µs over their minimum (each crosses both directions' queues, its ACKs the other's); the probe's p50 +30.92 ms over idle");
    const r = Responsiveness.parse(responsiveness({ idle, bidir: p }));
    expect(r.rpm).toBe(p.rpm);
    expect(r.evidence).toHaveLength(1);
  });

  test("no queue grew; a load without TCP_INFO says so; a probe that measured less than idle is negative", () => {
    const calm = phaseFigures(probe(70, 100, 200), results({ streams: [stream(0, "recv", 9e6)], remote: { streams: [], path: path(350, 100) } }), idle);
    expect(calm.added_latency_us).toBe(-10);
    expect(queueEvidence("download", calm)).toBe("download: no queue grew (the load flows' RTT 250.0 µs over their minimum); the probe's p50 −10.0 µs over idle");
    const blind = phaseFigures(probe(70, 100, 200), results({ streams: [stream(0, "recv", 9e6)] }), idle);
    expect(queueEvidence("download", blind)).toBe("download: the load flows' RTT unknown (no TCP_INFO); the probe's p50 −10.0 µs over idle");
  });

  test("this host's shaper, where readable: its queue's median and largest backlog, and their drain time at its rate", () => {
    const load = results({ streams: [stream(0, "send", 48e6)], path: path(45_080, 80), remote: { streams: [stream(0, "recv", 47.5e6)] } });
    const qdisc = { interface: "veth-a", kind: "tbf", rate_bps: 50e6, backlog_bytes: 490_536, backlog_max_bytes: 600_000 };
    const p = phaseFigures(probe(43_280, 60_000, 90_000), load, idle, qdisc);
    expect(p.client_qdisc).toEqual(qdisc);
    expect(queueEvidence("upload", p)).toBe(
      "upload: client → server (upload) queue grew: its flows' RTT 45.00 ms over their minimum; the probe's p50 +43.20 ms over idle; this host's tbf on veth-a held 479 KiB at the median (78.49 ms at its 50.0 Mbit/s), 586 KiB at most",
    );
  });

  test("the server's shaper, as the serve reported it in its result: the download's queue on its side", () => {
    const qdisc = { interface: "veth-b", kind: "tbf", rate_bps: 50e6, backlog_bytes: 300_000, backlog_max_bytes: 400_000 };
    const load = results({ streams: [stream(0, "recv", 47.5e6)], remote: { streams: [stream(0, "send", 48e6)], path: path(48_100, 100), qdisc } });
    const p = phaseFigures(probe(43_280, 60_000, 90_000), load, idle);
    expect(p.server_qdisc).toEqual(qdisc);
    expect(p.client_qdisc).toBeUndefined();
    // 300000 B × 8 / 50 Mbit/s = 48 ms
    expect(queueEvidence("download", p)).toBe(
      "download: server → client (download) queue grew: its flows' RTT 48.00 ms over their minimum; the probe's p50 +43.20 ms over idle; the server's tbf on veth-b held 293 KiB at the median (48.00 ms at its 50.0 Mbit/s), 391 KiB at most",
    );
  });

  test("the UDP pings: their percentiles and how many came back, beside the TCP probe's; none back, none shown", () => {
    const pings = results({ summary: { transactions: 1400, latency_us: { mean: 45_000, min: 40_000, max: 99_000, p50: 44_000, p90: 61_000, p99: 92_000, p999: 99_000 } } });
    const load = results({ streams: [stream(0, "send", 48e6)], path: path(45_080, 80), remote: { streams: [stream(0, "recv", 47.5e6)] } });
    const p = phaseFigures(probe(43_280, 60_000, 90_000), load, idle, undefined, pings);
    expect(p.udp_latency_us).toEqual({ p50: 44_000, p90: 61_000, p99: 92_000 });
    expect(p.udp_pings).toBe(1400);
    // RPM stays the TCP probe's.
    expect(p.rpm).toBeCloseTo(1386.32, 2);
    const lost = phaseFigures(probe(43_280, 60_000, 90_000), load, idle, undefined, results({ summary: { transactions: 0 } }));
    expect(lost.udp_latency_us).toBeUndefined();
    const text = responsivenessText(responsiveness({ idle, upload: p }), "head").split("\n");
    expect(text[4]).toBe("UDP pings, p50 / p99: upload 44.00 ms / 92.00 ms");
  });

  test("a probe with no transaction is an error, not a zero latency", () => {
    expect(() => phaseFigures(results({}), undefined, undefined)).toThrow("the probe completed no transaction");
  });

  test("an interrupted run reports the phases it measured, no RPM without bidir", () => {
    const r = responsiveness({ idle });
    expect(r).toEqual({ idle, evidence: [] });
    expect(responsivenessText(r, "head")).toBe(["head", "phase        throughput        p50        p90        p99       added      RPM", "idle                  -    80.0 µs   120.0 µs   300.0 µs           -   750000"].join("\n"));
  });

  test("the text report: a row per phase, the bidir split, RPM, the queue lines", () => {
    const load = results({ streams: [stream(1, "recv", 40e6)], path: path(30_100, 100), remote: { streams: [stream(0, "recv", 45e6)], path: path(20_100, 100) } });
    const text = responsivenessText(responsiveness({ idle, bidir: phaseFigures(probe(31_000, 40_000, 50_000), load, idle) }), "head").split("\n");
    expect(text[3]).toBe("bidir       85.0 Mbit/s   31.00 ms   40.00 ms   50.00 ms   +30.92 ms     1935");
    expect(text[4]).toBe("bidir: 45.0 Mbit/s up, 40.0 Mbit/s down");
    expect(text[5]).toBe("responsiveness: 1935 RPM (60 s ÷ the probe's median round trip, both directions loaded)");
    expect(text[6]).toStartWith("queue: bidir: queues grew: the upload flows' RTT 30.00 ms, the download flows' RTT 20.00 ms");
  });

  test("the probe: one paced 1-byte request/response stream of the load's duration, its own warm-up", () => {
    const load = Plan.parse({ streams: 8, durationS: 3, warmupS: 2, cooldownS: 0.5, bitsPerSecond: 10e6, socket: { sendBuffer: 65536, recvBuffer: 65536 } });
    expect(probePlan(load, 2)).toMatchObject({ test: "rr", transport: "tcp", streams: 1, requestBytes: 1, responseBytes: 1, durationS: 3, warmupS: 2, cooldownS: 0, bitsPerSecond: 0, transactionGapMs: PROBE_GAP_MS });
  });

  test("the pings: one UDP stream of 16-byte timestamped datagrams every 2 ms, a client spec the Worker accepts", () => {
    const load = Plan.parse({ streams: 8, durationS: 3, warmupS: 2, bitsPerSecond: 10e6 });
    const plan = pingPlan(load, 2);
    expect(plan).toMatchObject({ test: "rr", transport: "udp", streams: 1, requestBytes: 16, responseBytes: 16, durationS: 3, warmupS: 2, bitsPerSecond: 0, transactionGapMs: PING_GAP_MS });
    expect(RrClientSpec.parse(senders(plan, { host: "127.0.0.1", ports: [5000] })[0])).toMatchObject({ transport: "udp", gapMs: 2, inFlight: 1 });
    // A UDP gap needs room for the stamp.
    expect(RrClientSpec.safeParse({ kind: "rr-client", id: 0, transport: "udp", connect: { host: "h", port: 1 }, gapMs: 2 }).success).toBe(false);
  });
});
