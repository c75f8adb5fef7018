import { describe, expect, test } from "bun:test";
import { StandIn, tcp, tcpInterval } from "../../tests/fixtures/status/stand-in-run.ts";
import type { Figures } from "../report/result.ts";
import { IntervalEvent, StatusDocument, TestView } from "./schema.ts";
import { TestRunSource } from "./test-run-source.ts";
import { createStatusApp } from "./app.ts";
import { markPart } from "../engine/run-parts.ts";


describe("TestRunSource", () => {
  test("follows a run from waiting through warm-up and measuring to done", () => {
    const source = new TestRunSource({ mode: "loopback", role: "both" });
    const run = new StandIn(tcp);
    const events: IntervalEvent[] = [];
    source.subscribe((e) => events.push(IntervalEvent.parse(e)));
    expect(source.add(run)).toBe("1");

    let v = TestView.parse(source.current());
    expect(v).toMatchObject({ id: "1", mode: "loopback", role: "both", peer: "127.0.0.1", phase: "waiting" });
    expect(v.remainingSeconds).toBe(4);
    expect(v.durationSeconds).toBe(3);
    expect(v.streams).toEqual([]);
    expect(v.intervals).toEqual([]);

    run.setPhase("warm-up");
    run.interval(tcpInterval("warm-up", 1000));
    v = TestView.parse(source.current());
    expect(v.bytes).toBe(1000);
    expect(v.streams).toEqual([
      { id: 0, side: "send", bytes: 1100, packets: 0, transactions: 0, bitsPerSecond: 8800, averageBitsPerSecond: 0 },
      { id: 1, side: "recv", bytes: 1000, packets: 0, transactions: 0, bitsPerSecond: 8000, averageBitsPerSecond: 0 },
    ]);
    expect(v.throughput).toEqual({ current: 8000, average: 0 });

    run.setPhase("measuring", 1500);
    expect(source.current()!.remainingSeconds).toBeCloseTo(1.5, 1);
    run.interval(tcpInterval("measuring", 2000));
    run.interval(tcpInterval("measuring", 4000, 2));
    run.live = { seconds: 3, sum: { bytes: 6000, seconds: 3, throughput_bps: 16000 } };
    v = TestView.parse(source.current());
    // Two different spans, both right: the totals count from the first interval, warm-up included (1000 + 2000 +
    // 4000, as src/status/README.md says of test.bytes and the metrics of anyperf_bytes_total), while the averages are
    // the measured window's (the run's current(): 6000 bytes in 3 s), as the results' summary is.
    expect(v.bytes).toBe(1000 + 2000 + 4000);
    expect(v.streams[1]!.bytes).toBe(1000 + 2000 + 4000);
    expect(v.bytes - 1000).toBe(run.live.sum.bytes);
    expect(v.throughput).toEqual({ current: 16000, average: 16000 });
    // Per-stream averages cover the measured intervals only: (2000 + 4000) bytes in 3 s.
    expect(v.streams[1]!.averageBitsPerSecond).toBe(((2000 + 4000) * 8) / 3);
    expect(v.intervals.map((i) => i.bitsPerSecond)).toEqual([8000, 16000, 16000]);
    // The chart's time axis is seconds since the test started and only moves forward.
    for (let k = 1; k < v.intervals.length; k++) expect(v.intervals[k]!.end).toBeGreaterThanOrEqual(v.intervals[k - 1]!.end);
    expect(v.intervals[2]!.end - v.intervals[2]!.start).toBe(2);

    expect(events.map((e) => [e.seq, e.phase, e.bitsPerSecond])).toEqual([
      [0, "warm-up", 8000],
      [1, "measuring", 16000],
      [2, "measuring", 16000],
    ]);
    expect(events[0]!.streams).toEqual([{ id: 0, bitsPerSecond: 8800 }, { id: 1, bitsPerSecond: 8000 }]);
    expect(source.results()).toBeUndefined();

    run.setPhase("done");
    expect(source.current()).toBeUndefined();
    const done = TestView.parse(source.tests()[0]);
    expect(done.phase).toBe("done");
    expect(done.remainingSeconds).toBe(0);
    const frozen = done.elapsedSeconds;
    expect(source.tests()[0]!.elapsedSeconds).toBe(frozen);
    expect(source.results()).toEqual(run.results());
    source.results("1");
    expect(run.resultsCalls).toBe(2); // the test's own call above, and one computed and kept by the source
    source.setResults(run, { amended: true });
    expect(source.results("1")).toEqual({ amended: true });
  });

  test("request/response: rates and latency with its transaction count", () => {
    const source = new TestRunSource({ mode: "netperf", role: "client" });
    const run = new StandIn({ mode: "netperf", role: "client", transport: "tcp", test: "rr" });
    source.add(run);
    run.setPhase("measuring");
    const f: Figures = { bytes: 200, seconds: 1, throughput_bps: 1600, transactions: 100, transactions_per_second: 100 };
    run.interval({ start: 0, end: 1, phase: "measuring", sum: f, streams: [{ id: 0, side: "client", ...f }] });
    const latency_us = { mean: 20, min: 10, max: 90, p50: 18, p90: 25, p99: 60, p999: 88 };
    run.live = { seconds: 1, sum: { ...f, transactions: 100, transactions_per_second: 100, latency_us } };
    const v = TestView.parse(source.current());
    expect(v.transactionsPerSecond).toEqual({ current: 100, average: 100 });
    expect(v.latencyMicroseconds).toEqual({ p50: 18, p90: 25, p99: 60, p999: 88, mean: 20, count: 100 });
    expect(v.transactions).toBe(100);
    expect(v.packetsPerSecond).toBeUndefined();
  });

  test("UDP: loss adds up, jitter is the latest level", () => {
    const source = new TestRunSource({ mode: "loopback", role: "both" });
    const run = new StandIn({ ...tcp, transport: "udp" });
    source.add(run);
    run.setPhase("measuring");
    for (const [lost, jitter] of [[3, 0.5], [4, 0.25]] as const) {
      const f: Figures = { bytes: 1400, seconds: 1, throughput_bps: 11200, packets: 1, packets_per_second: 1, lost, jitter_ms: jitter };
      run.interval({ start: 0, end: 1, phase: "measuring", sum: f, streams: [{ id: 0, side: "recv", ...f }] });
    }
    const v = TestView.parse(source.current());
    expect(v.lost).toBe(7);
    expect(v.streams[0]!.lost).toBe(7);
    expect(v.streams[0]!.jitterMilliseconds).toBe(0.25);
    expect(v.packetsPerSecond).toEqual({ current: 1, average: 0 });
  });

  test("keeps the newest `keep` tests and lets go of the others", () => {
    const source = new TestRunSource({ mode: "netserver", role: "server", persistent: true, keep: 2 });
    const runs = [new StandIn(tcp), new StandIn(tcp), new StandIn(tcp)];
    for (const r of runs) source.add(r);
    expect(source.tests().map((t) => t.id)).toEqual(["3", "2"]);
    expect(runs.map((r) => r.listening)).toEqual([0, 2, 2]);
    source.close();
    expect(runs.map((r) => r.listening)).toEqual([0, 0, 0]);
  });

  test("live CPU and retransmits are the run's own figures", () => {
    const source = new TestRunSource({ mode: "loopback", role: "both" });
    const run = new StandIn(tcp);
    source.add(run);
    run.setPhase("measuring");
    run.interval(tcpInterval("measuring", 1000));
    let v = TestView.parse(source.current());
    expect(v.cpu).toBeUndefined();
    expect(v.retransmits).toBeUndefined();
    // Not the host's RetransSegs (other tests' and other programs' segments too): the figure the run's results give.
    run.liveCpu = { busyPercent: 42.5, processPercent: 97 };
    run.live = { seconds: 1, sum: { bytes: 1000, seconds: 1, throughput_bps: 8000, retransmits: 4 } };
    run.interval(tcpInterval("measuring", 1000));
    v = TestView.parse(source.current());
    expect(v.cpu).toEqual({ busyPercent: 42.5, processPercent: 97 });
    expect(v.retransmits).toBe(4);
    source.close();
  });

  test("a server between tests: waiting, with the recent tests and their results listed", async () => {
    const source = new TestRunSource({ mode: "iperf3", role: "server", persistent: true });
    const app = createStatusApp(source);
    const get = async () => StatusDocument.parse(await (await app.request("/status")).json());
    const info = { mode: "iperf3", role: "server", peer: "127.0.0.1:40000", transport: "tcp", test: "stream" } as const;
    const first = new StandIn(info);
    source.add(first);
    first.setPhase("measuring");
    expect((await get()).phase).toBe("measuring");
    first.setPhase("done");
    let doc = await get();
    expect(doc.phase).toBe("waiting");
    expect(doc.test?.id).toBe("1");
    expect(doc.recent.map((r) => [r.id, r.phase, r.results])).toEqual([["1", "done", "/results/1"]]);
    const second = new StandIn({ ...info, peer: "127.0.0.1:40002" });
    source.add(second);
    second.setPhase("measuring");
    doc = await get();
    expect(doc.phase).toBe("measuring");
    expect(doc.test?.peer).toBe("127.0.0.1:40002");
    expect(doc.recent.map((r) => [r.id, r.phase, r.results])).toEqual([["2", "measuring", null], ["1", "done", "/results/1"]]);
    expect((await app.request("/results/1")).status).toBe(200);
    expect((await app.request("/results/2")).status).toBe(404);
    // /results without an id is the latest finished test while another runs.
    expect(await (await app.request("/results")).json()).toEqual(JSON.parse(JSON.stringify(first.results())));
  });
});

describe("a measurement of several runs (--responsiveness)", () => {
  const rr = { mode: "client", role: "client", peer: "127.0.0.1:5001", transport: "tcp", test: "rr" } as const;
  const probeInterval = (p50: number, end: number): Parameters<StandIn["interval"]>[0] => {
    const f: Figures = { bytes: 100, seconds: 0.25, throughput_bps: 3200, transactions: 50, transactions_per_second: 200, latency_us: { mean: p50, min: p50 / 2, max: p50 * 4, p50, p90: p50 * 2, p99: p50 * 3, p999: p50 * 4 } };
    return { start: end - 0.25, end, phase: "measuring", sum: f, streams: [{ id: 0, side: "client", ...f }] };
  };

  test("the probe's latency and the load's throughput per interval, on one time axis from its first run; /measurement.svg draws them", async () => {
    const source = new TestRunSource({ mode: "client", role: "client" });
    const app = createStatusApp(source);
    const t0 = Date.now() - 10_000;
    const idle = new StandIn(rr);
    idle.startedAt = new Date(t0);
    markPart(idle, { kind: "responsiveness", measurement: "m1", phase: "idle", role: "probe" });
    source.add(idle);
    // Another test beside it, not marked: not part of it.
    source.add(new StandIn(tcp));
    idle.setPhase("measuring");
    idle.interval(probeInterval(100, 0.25));
    idle.interval(probeInterval(120, 0.5));
    idle.setPhase("done");
    const load = new StandIn({ ...tcp, mode: "client", role: "client" });
    load.startedAt = new Date(t0 + 2000);
    markPart(load, { kind: "responsiveness", measurement: "m1", phase: "upload", role: "load" });
    source.add(load);
    const probe = new StandIn(rr);
    probe.startedAt = new Date(t0 + 2500);
    markPart(probe, { kind: "responsiveness", measurement: "m1", phase: "upload", role: "probe" });
    source.add(probe);
    load.setPhase("measuring");
    load.interval(tcpInterval("measuring", 6_000_000));
    probe.setPhase("measuring");
    // Before its first transaction, an interval of the probe holds no latency: no sample.
    probe.interval({ ...probeInterval(1, 0.25), sum: { bytes: 0, seconds: 0.25, throughput_bps: 0, transactions: 0 } });
    probe.interval(probeInterval(40_000, 0.5));

    const doc = StatusDocument.parse(await (await app.request("/status")).json());
    const m = doc.measurement!;
    expect(m).toMatchObject({ kind: "responsiveness", phase: "upload" });
    expect(m.startedAt).toBe(new Date(t0).toISOString());
    // The StandIn's intervals end at "now" at the earliest (the chart only moves forward): t is its run's offset plus that.
    expect(m.probe.map((s) => [s.phase, s.p50, s.p90, s.p99])).toEqual([["idle", 100, 200, 300], ["idle", 120, 240, 360], ["upload", 40_000, 80_000, 120_000]]);
    expect(m.load.map((s) => [s.phase, s.bitsPerSecond])).toEqual([["upload", 48e6]]);
    // Each sample at its interval's end, which the source clocks as its run's age when the interval came (now
    // here): the run's offset plus that age is the time since the measurement's first run started.
    const now = (Date.now() - t0) / 1000;
    for (const x of [...m.probe, ...m.load]) expect(Math.abs(x.t - now)).toBeLessThan(1);
    // The probe's own test view carries each interval's latency too.
    expect(doc.running.find((t) => t.mode === "client" && t.transactionsPerSecond)!.intervals.map((i) => i.latencyMicroseconds?.p50)).toEqual([undefined, 40_000]);

    const res = await app.request("/measurement.svg");
    expect(res.headers.get("content-type")).toStartWith("image/svg+xml");
    const svg = await res.text();
    expect(svg).toContain('data-phase="upload" data-probe="3" data-load="1"');
    expect(svg).toContain("responsiveness: the probe&#39;s round trip, upload phase");
    expect(svg).toContain("responsiveness: the load&#39;s throughput, upload phase");

    // The next measurement (a --repeat's next run) replaces it.
    const next = new StandIn(rr);
    markPart(next, { kind: "responsiveness", measurement: "m2", phase: "idle", role: "probe" });
    source.add(next);
    expect(source.measurement()).toMatchObject({ phase: "idle", probe: [], load: [] });
  });

  test("without marked runs: no measurement in /status, /measurement.svg is 404", async () => {
    const source = new TestRunSource({ mode: "client", role: "client" });
    const app = createStatusApp(source);
    source.add(new StandIn(tcp));
    expect(StatusDocument.parse(await (await app.request("/status")).json()).measurement).toBeUndefined();
    const res = await app.request("/measurement.svg");
    expect(res.status).toBe(404);
    expect((await res.json()).error).toContain("--responsiveness");
  });
});
