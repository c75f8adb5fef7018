import { afterAll, describe, expect, test } from "bun:test";
import { runLoopback } from "../../src/loopback.ts";
import { Plan, type PlanInput } from "../../src/plan.ts";
import { Results } from "../../src/report/result.ts";
import { WorkerPool } from "../../src/engine/worker-pool.ts";

const run = async (p: Partial<PlanInput>) => Results.parse(await runLoopback(Plan.parse({ streams: 2, durationS: 1, intervalS: 0.5, ...p })));

afterAll(() => WorkerPool.shutdown());

describe("loopback runs reconcile sender and receiver", () => {
  test("TCP bulk: every byte sent is received", async () => {
    const r = await run({ streams: 2 });
    expect(r.summary.bytes).toBeGreaterThan(1e6);
    expect(r.totals.received_bytes).toBe(r.totals.sent_bytes!);
    expect(r.streams.filter((s) => s.side === "recv")).toHaveLength(2);
    expect(r.intervals.length).toBeGreaterThanOrEqual(1);
    expect(r.summary.throughput_bps).toBeCloseTo((r.summary.bytes * 8) / r.summary.seconds, 0);
  });

  test("TCP with warm-up: the measured window excludes it", async () => {
    const r = await run({ streams: 1, warmupS: 0.5, durationS: 1 });
    expect(r.summary.seconds).toBeGreaterThan(0.9);
    expect(r.summary.seconds).toBeLessThan(1.3);
    expect(r.summary.bytes).toBeLessThan(r.totals.received_bytes!);
  });

  test("TCP rate pacing holds the target", async () => {
    const r = await run({ streams: 1, durationS: 1.5, bitsPerSecond: 80e6 });
    expect(r.summary.throughput_bps).toBeGreaterThan(70e6);
    expect(r.summary.throughput_bps).toBeLessThan(90e6);
  });

  test("UDP stamped: received + lost = sent, loss counted from sequence gaps", async () => {
    const r = await run({ transport: "udp", streams: 1, datagramBytes: 64, bitsPerSecond: 10e6 });
    expect(r.summary.packets).toBeGreaterThan(1000);
    expect(r.totals.received_packets! + (r.summary.lost ?? 0)).toBeLessThanOrEqual(r.totals.sent_packets!);
    expect(r.totals.sent_packets! - r.totals.received_packets!).toBeLessThanOrEqual(r.totals.sent_packets! * 0.05);
    expect(r.summary.jitter_ms).toBeGreaterThanOrEqual(0);
    expect(r.summary.packets_per_second).toBeGreaterThan((10e6 / 8 / 64) * 0.8);
  });

  test("UDP unstamped 1-byte datagrams: loss is sent − received", async () => {
    const r = await run({ transport: "udp", streams: 1, datagramBytes: 1 });
    expect(r.summary.lost).toBe(r.totals.sent_packets! - r.totals.received_packets!);
    expect(r.totals.received_packets).toBeGreaterThan(1000);
  });

  test("TCP_RR: transactions counted by client and server agree; percentiles ordered", async () => {
    const r = await run({ test: "rr", streams: 1, requestBytes: 1, responseBytes: 1 });
    const l = r.summary.latency_us!;
    expect(r.summary.transactions).toBeGreaterThan(100);
    expect(l.p50).toBeLessThanOrEqual(l.p90);
    expect(l.p90).toBeLessThanOrEqual(l.p99);
    expect(l.p99).toBeLessThanOrEqual(l.p999);
    // One transaction in flight: the mean latency is the time per transaction (Little's law), within timer noise.
    expect((l.mean * r.summary.transactions_per_second!) / 1e6).toBeGreaterThan(0.8);
    expect((l.mean * r.summary.transactions_per_second!) / 1e6).toBeLessThan(1.05);
    const server = r.streams.filter((s) => s.side === "server").reduce((a, s) => a + (s.transactions ?? 0), 0);
    // Both sides' windows are cut within microseconds of each other, with one transaction in flight: at most one apart.
    expect(Math.abs(server - r.summary.transactions!)).toBeLessThanOrEqual(1);
  });

  test("TCP_RR paced (a latency probe): one transaction started per gap, each still timed alone", async () => {
    const r = await run({ test: "rr", streams: 1, durationS: 1, transactionGapMs: 20 });
    // One start per 20 ms: at most seconds / 0.02 + 1 starts fall in the window (fence posts), and one transaction
    // begun before it may end inside it; a late timer (a loaded machine) only lowers the count, so the floor is loose.
    const n = r.summary.transactions!;
    expect(n).toBeLessThanOrEqual(Math.floor(r.summary.seconds / 0.02) + 2);
    expect(n / r.summary.seconds).toBeGreaterThan(25);
    // The gap is not in the latency: a loopback round trip stays far below it.
    expect(r.summary.latency_us!.p50).toBeLessThan(5_000);
  });

  test("UDP_RR runs", async () => {
    const r = await run({ test: "rr", transport: "udp", streams: 1, requestBytes: 32, responseBytes: 64 });
    expect(r.summary.transactions).toBeGreaterThan(100);
  });

  test("TCP_CRR opens a connection per transaction", async () => {
    const r = await run({ test: "crr", streams: 1 });
    expect(r.summary.transactions).toBeGreaterThan(50);
    const client = r.streams.find((s) => s.side === "client")!;
    expect(client.connections).toBeGreaterThanOrEqual(r.summary.transactions!);
  });
});

describe("errors are clear", () => {
  test("a port in use names the cause and the fix", async () => {
    const busy = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    try {
      await expect(run({ streams: 1, port: busy.port })).rejects.toThrow(/port \d+ in use.*pass another port/);
    } finally {
      busy.stop(true);
    }
  });
});

describe("TestRun", () => {
  test("a plane attached after the window started counts from when it joined", async () => {
    const { DataPlane } = await import("../../src/engine/data-plane.ts");
    const { TestRun } = await import("../../src/engine/test-run.ts");
    const run = new TestRun({ mode: "test", role: "both", transport: "tcp", test: "stream" }, { warmupS: 0, durationS: 0, cooldownS: 0, intervalS: 0.2 });
    const rx1 = await DataPlane.open([{ kind: "tcp-recv", id: 0, listen: { host: "127.0.0.1", port: 0 } }]);
    const tx1 = await DataPlane.open([{ kind: "tcp-send", id: 0, connect: { host: "127.0.0.1", port: rx1.localPorts[0]! }, rate: { bitsPerSecond: 80e6 } }]);
    run.attach(rx1, "recv");
    tx1.go();
    run.beginMeasuring();
    await Bun.sleep(300);
    const rx2 = await DataPlane.open([{ kind: "tcp-recv", id: 0, listen: { host: "127.0.0.1", port: 0 } }]);
    const tx2 = await DataPlane.open([{ kind: "tcp-send", id: 0, connect: { host: "127.0.0.1", port: rx2.localPorts[0]! }, rate: { bitsPerSecond: 80e6 } }]);
    tx2.go();
    await Bun.sleep(200);
    run.attach(rx2, "recv");
    await Bun.sleep(300);
    run.endMeasuring();
    run.finish();
    const r = run.results();
    await Promise.all([tx1.stop(), tx2.stop()]);
    await Promise.all([rx1.stop(), rx2.stop()]);
    const [a, b] = r.streams;
    // The late stream ran 0.5 s but was attached for the last 0.3 s only; its bytes before joining are not counted.
    expect(b!.bytes).toBeLessThan(a!.bytes * 0.75);
    expect(b!.bytes).toBeGreaterThan(0);
    expect(r.summary.bytes).toBe(a!.bytes + b!.bytes);
  });
});

describe("many flows", () => {
  test("the report carries memory per flow and the slowest/fastest flow ratio, from its own streams", async () => {
    const r = await run({ streams: 50, test: "rr" });
    const f = r.flows!;
    expect(f.count).toBe(50);
    expect(f.memory_per_flow_bytes).toBe((f.rss_with_flows_bytes - f.rss_before_bytes) / 50);
    const rates = r.streams.filter((s) => s.side === "client").map((s) => s.transactions_per_second!);
    expect(rates).toHaveLength(50);
    expect(f.slowest_to_fastest).toBe(Math.min(...rates) / Math.max(...rates));
    expect(f.slowest_to_fastest).toBeGreaterThan(0);
  });
});
