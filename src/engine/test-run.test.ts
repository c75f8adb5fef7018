import { afterAll, expect, test } from "bun:test";
import { figures, TestRun } from "./test-run.ts";
import { blankCounters, HIST_BUCKETS, type StreamCounters } from "../counters.ts";
import { count, record } from "../histogram.ts";
import { StreamSpec } from "../stream-spec.ts";
import { PolledPlane } from "./polled-plane.ts";
import { DataPlane } from "./data-plane.ts";
import { WorkerPool } from "./worker-pool.ts";

afterAll(() => WorkerPool.shutdown());

const info = { mode: "test", role: "both", transport: "tcp", test: "stream" } as const;

test.skipIf(process.platform !== "linux")("a watched test reads live host and process CPU at each interval", async () => {
  const run = new TestRun(info, { warmupS: 0, durationS: 0, cooldownS: 0, intervalS: 0.05 });
  const cpu: Array<TestRun["liveCpu"]> = [];
  run.onInterval((_, r) => cpu.push(r.liveCpu));
  run.beginMeasuring();
  const spinUntil = performance.now() + 80;
  while (performance.now() < spinUntil); // burn CPU so the interval has ticks
  await Bun.sleep(60);
  // The listeners see each interval's CPU; the first interval after the spin holds the burnt CPU.
  expect(cpu.length).toBeGreaterThan(0);
  for (const c of cpu) expect(c!.busyPercent).toBeLessThanOrEqual(100);
  expect(cpu[0]!.processPercent).toBeGreaterThan(0);
  run.finish();
});

test("a front end that cuts its own intervals: one cut per interval, at the instant it names", () => {
  const run = new TestRun(info, { warmupS: 0, durationS: 0, cooldownS: 0, intervalS: 1 });
  run.cutsIntervals();
  const seen: Array<[number, number]> = [];
  run.onInterval((i) => seen.push([i.start, i.end]));
  const t0 = performance.now();
  run.beginMeasuring(t0);
  run.interval(t0 + 500);
  run.interval(t0 + 1000);
  run.endMeasuring();
  run.finish();
  // No own timer, and no extra sliver at the end: the front end cut its last interval.
  expect(seen.map(([a, b]) => [a, b].map((x) => Math.round(x * 1e6) / 1e6))).toEqual([[0, 0.5], [0.5, 1]]);
  expect(run.intervals.length).toBe(2);
});

test("one stream's figures read its own histogram: the same latency as summed with a stream that timed nothing", () => {
  const counters = (us: number[]): StreamCounters => {
    const histogram = new Uint32Array(HIST_BUCKETS);
    for (const u of us) record(histogram, u);
    return { ...blankCounters(), transactions: us.length, histogram };
  };
  const rr = { transport: "tcp", test: "rr" } as const;
  const timed = counters([10, 20, 30, 4000]);
  const alone = figures([timed], 1, rr);
  expect(alone.latency_us).toEqual(figures([timed, counters([])], 1, rr).latency_us);
  expect(alone.latency_us!.max).toBeGreaterThan(3000);
  expect(alone.transactions).toBe(4);
  // Reading it left it as it was.
  expect(count(timed.histogram)).toBe(4);
});

/** A real plane counted on the main thread: the test moves its counters as a stream's owner would. */
function polled(kind: "tcp-recv" | "udp-recv" = "tcp-recv", streams = 1) {
  const moved = Array.from({ length: streams }, () => ({ bytes: 0, packets: 0, jitter: 0, tcpRttUs: 0, tcpRetrans: 0 }));
  const specs = moved.map((_, id) => StreamSpec.parse({ kind, id, listen: { host: "127.0.0.1", port: 0 } }));
  return { plane: new PolledPlane(specs, (i) => moved[i]!), moved };
}

const quiet = { warmupS: 0, durationS: 0, cooldownS: 0, intervalS: 1 };

test("interval windows: each stream's counters since the caller's last interval, and the window's seconds", () => {
  const run = new TestRun({ ...info, transport: "udp" }, quiet);
  const { plane, moved } = polled("udp-recv", 2);
  run.attach(plane, "recv");
  run.cutsIntervals();
  const t0 = performance.now();
  moved[0]!.bytes = 100; // before the window: not in the first interval
  run.beginMeasuring(t0);
  moved[0]!.bytes += 1000;
  moved[0]!.jitter = 0.002;
  moved[1]!.packets = 7;
  const first = run.interval(t0 + 250);
  expect(first.seconds).toBeCloseTo(0.25, 9);
  expect(first.streams(plane)!.map((s) => [s.bytes, s.packets])).toEqual([[1000, 0], [0, 7]]);
  moved[0]!.bytes += 500;
  moved[0]!.jitter = 0.001;
  const second = run.interval(t0 + 1000);
  expect(second.seconds).toBeCloseTo(0.75, 9);
  expect(second.stream(plane, 0)!.bytes).toBe(500);
  // Levels are as they stood at the window's end, not a difference.
  expect(second.stream(plane, 0)!.jitter).toBe(0.001);
  expect(second.stream(plane, 1)!.packets).toBe(0);
  // The listeners' figures come from the same cuts.
  expect(run.intervals.map((i) => i.sum.bytes)).toEqual([1000, 500]);
  // The windows the caller holds stay as they were.
  expect(first.stream(plane, 0)!.bytes).toBe(1000);
  run.finish();
});

test("fromOpen: the window and its first interval count what the streams moved before it opened", () => {
  const run = new TestRun(info, quiet);
  const { plane, moved } = polled();
  run.attach(plane, "recv");
  run.cutsIntervals();
  moved[0]!.bytes = 300; // came with the connection's first read
  const t0 = performance.now();
  run.beginMeasuring(t0, true);
  moved[0]!.bytes += 700;
  expect(run.interval(t0 + 100).stream(plane, 0)!.bytes).toBe(1000);
  run.endMeasuring();
  expect(run.measured().stream(plane, 0)!.bytes).toBe(1000);
  expect(run.results().summary.bytes).toBe(1000);
  run.finish();
});

test("a late plane counts from when it joined, in the measured window and in the next interval", () => {
  const run = new TestRun(info, quiet);
  const a = polled();
  const b = polled();
  run.attach(a.plane, "recv");
  run.cutsIntervals();
  const t0 = performance.now();
  run.beginMeasuring(t0);
  a.moved[0]!.bytes = 10;
  run.interval(t0 + 100);
  b.moved[0]!.bytes = 5000; // moved before it was attached
  run.attach(b.plane, "recv");
  b.moved[0]!.bytes += 40;
  a.moved[0]!.bytes += 1;
  const next = run.interval(t0 + 200);
  expect(next.stream(b.plane, 0)!.bytes).toBe(40);
  expect(next.stream(a.plane, 0)!.bytes).toBe(1);
  const m = run.measured();
  expect(m.stream(a.plane, 0)!.bytes).toBe(11);
  expect(m.stream(b.plane, 0)!.bytes).toBe(40);
  run.finish();
});

test("measured: the window the end cut closed; later bytes stay out", () => {
  const run = new TestRun(info, quiet);
  const { plane, moved } = polled();
  run.attach(plane, "recv");
  expect(run.measured().seconds).toBe(0);
  moved[0]!.bytes = 50;
  const t0 = performance.now();
  run.beginMeasuring(t0);
  moved[0]!.bytes += 2000;
  // While open: up to now.
  expect(run.measured().stream(plane, 0)!.bytes).toBe(2000);
  run.endMeasuring();
  moved[0]!.bytes += 9999; // cool-down, FIN exchange
  const m = run.measured();
  expect(m.stream(plane, 0)!.bytes).toBe(2000);
  expect(m.seconds).toBeCloseTo(run.results().phases.measured_s, 9);
  expect(m.seconds).toBeGreaterThan(0);
  if (process.platform === "linux") {
    expect(m.host?.seconds).toBeGreaterThanOrEqual(0);
    expect(m.host?.cores).toBeGreaterThan(0);
  }
  run.finish();
});

test("cuts and windows between them: since a cut, between two, from the streams' open", () => {
  const run = new TestRun(info, quiet);
  const { plane, moved } = polled();
  run.attach(plane, "recv");
  moved[0]!.bytes = 100;
  const t0 = performance.now();
  const base = run.cut(false, t0);
  moved[0]!.bytes += 20;
  const frozen = run.cut(false, t0 + 2000);
  moved[0]!.bytes += 3;
  expect(run.between(base, frozen).stream(plane, 0)!.bytes).toBe(20);
  expect(run.between(base, frozen).seconds).toBeCloseTo(2, 9);
  expect(run.since(base).stream(plane, 0)!.bytes).toBe(23);
  expect(run.since(run.originAt(t0)).stream(plane, 0)!.bytes).toBe(123);
  // A window is its end cut: the next one is measured from it.
  const w = run.since(base, t0 + 3000);
  moved[0]!.bytes += 4;
  expect(run.since(w).stream(plane, 0)!.bytes).toBe(4);
  run.finish();
});

test("retransmits: the window's TCP_INFO retransmits per stream, and the test's one figure from the same cut", () => {
  const run = new TestRun(info, quiet);
  const { plane, moved } = polled("tcp-recv", 2);
  run.attach(plane, "recv");
  run.cutsIntervals();
  moved[0]!.tcpRetrans = 5; // before the window
  moved[0]!.tcpRttUs = 40;
  const t0 = performance.now();
  run.beginMeasuring(t0);
  moved[0]!.tcpRetrans += 3;
  moved[1]!.tcpRetrans = 4;
  moved[1]!.tcpRttUs = 60;
  const i = run.interval(t0 + 500);
  expect(i.streams(plane)!.map((s) => s.tcpRetrans)).toEqual([3, 4]);
  expect(i.stream(plane, 1)!.tcpRttUs).toBe(60);
  expect(run.intervals[0]!.sum.retransmits).toBe(7);
  moved[1]!.tcpRetrans += 1;
  run.endMeasuring();
  expect(run.measured().streams(plane)!.reduce((n, s) => n + s.tcpRetrans, 0)).toBe(8);
  expect(run.results().retransmits).toBe(8);
  run.finish();
});

test.skipIf(process.platform !== "linux")("a loopback data plane: the measured window holds what the receiver read, and the connection with fromOpen", async () => {
  const recv = await DataPlane.open([{ kind: "tcp-recv", id: 0, listen: { host: "127.0.0.1", port: 0 } }]);
  const send = await DataPlane.open([{ kind: "tcp-send", id: 0, connect: { host: "127.0.0.1", port: recv.localPorts[0]! }, limitBytes: 4 << 20 }]);
  const run = new TestRun(info, quiet);
  run.attach(send, "send");
  run.attach(recv, "recv");
  // The connection was accepted before the window: only a window counted from the streams' open holds it.
  run.beginMeasuring(performance.now(), true);
  send.go();
  await Promise.all([send.ended, recv.ended]);
  run.endMeasuring();
  const m = run.measured();
  expect(m.stream(send, 0)!.bytes).toBe(4 << 20);
  expect(m.stream(recv, 0)!.bytes).toBe(4 << 20);
  expect(m.stream(recv, 0)!.connections).toBe(1);
  expect(run.results().summary.bytes).toBe(4 << 20);
  run.finish();
}, 60_000);

test("expected planes, from their open: the window opens when the last one joins, at the first one's open", () => {
  const run = new TestRun(info, quiet, { expectedPlanes: 2, fromOpen: true });
  const [a, b, late] = [polled(), polled(), polled()];
  const t0 = performance.now();
  a.moved[0]!.bytes = 100; // came with the first read
  expect(run.attach(a.plane, "recv", t0)).toBe(true);
  expect(run.phase).toBe("waiting");
  b.moved[0]!.bytes = 20;
  expect(run.attach(b.plane, "recv", t0 + 5)).toBe(true);
  expect(run.phase).toBe("measuring");
  a.moved[0]!.bytes += 1;
  const m = run.measured();
  expect(m.from.atMs).toBe(t0);
  expect([m.stream(a.plane, 0)!.bytes, m.stream(b.plane, 0)!.bytes]).toEqual([101, 20]);
  // A plane after the window began is held, not counted: windows read it (from its open), the figures leave it out.
  late.moved[0]!.bytes = 7000;
  expect(run.attach(late.plane, "recv", t0 + 50)).toBe(false);
  late.moved[0]!.bytes += 1;
  expect(run.measured().stream(late.plane, 0)!.bytes).toBe(7001);
  expect(run.interval().stream(late.plane, 0)!.bytes).toBe(7001);
  run.end();
  expect(run.results().summary.bytes).toBe(121);
  expect(run.results().streams.length).toBe(2);
  expect(run.measured().stream(late.plane, 0)!.bytes).toBe(7001);
});

test("end: idempotent; a window the expected planes never opened begins and closes there, holding what moved", () => {
  const run = new TestRun(info, quiet, { expectedPlanes: 3, fromOpen: true });
  const a = polled();
  run.attach(a.plane, "recv", performance.now());
  a.moved[0]!.bytes = 640;
  run.end();
  expect(run.phase).toBe("done");
  expect(run.results().summary.bytes).toBe(640);
  a.moved[0]!.bytes += 1;
  run.end();
  expect(run.measured().stream(a.plane, 0)!.bytes).toBe(640);
  expect(run.attach(polled().plane, "recv")).toBe(false);
});

test("begin: the front end opens the window early (a stream ended first); later planes are held", () => {
  const run = new TestRun(info, quiet, { expectedPlanes: 2 });
  const [a, b] = [polled(), polled()];
  a.moved[0]!.bytes = 30; // not from open: before the window, not in it
  run.attach(a.plane, "recv");
  run.begin();
  run.begin();
  a.moved[0]!.bytes += 5;
  expect(run.attach(b.plane, "recv")).toBe(false);
  b.moved[0]!.bytes = 9;
  run.end();
  expect(run.results().summary.bytes).toBe(5);
  // Without fromOpen a held plane's window counts from when it joined, like any late plane.
  expect(run.measured().stream(b.plane, 0)!.bytes).toBe(9);
});

test("one expected plane: the window opens as the data phase's plane joins (netperf's data phase)", () => {
  const run = new TestRun({ ...info, test: "rr" }, quiet, { expectedPlanes: 1 });
  const { plane, moved } = polled();
  expect(run.measured().stream(plane, 0)).toBeUndefined();
  run.attach(plane, "client");
  expect(run.phase).toBe("measuring");
  moved[0]!.bytes = 12;
  run.end();
  run.end();
  expect(run.measured().stream(plane, 0)!.bytes).toBe(12);
  expect(run.measured().seconds).toBeGreaterThan(0);
});

test("cwnd is the senders': a bulk receiver's socket has only its unused initial window (issue 29 item 7)", () => {
  const tcp = { transport: "tcp", test: "stream" } as const;
  const stream = (cwnd: number): StreamCounters => ({ ...blankCounters(), bytes: 1e6, tcpRttUs: 50, tcpCwnd: cwnd });
  expect(figures([stream(10)], 1, tcp, true).cwnd).toBeUndefined();
  expect(figures([stream(10)], 1, tcp, true).rtt_us).toBe(50);
  expect(figures([stream(312), stream(200)], 1, tcp, false).cwnd).toBe(512);
  // Request/response sockets both send: each end's window is its own figure.
  expect(figures([stream(10)], 1, { transport: "tcp", test: "rr" }, true).cwnd).toBe(10);
});

test("reached: every stream connected, or a first byte; false when the wait is aborted first", async () => {
  const run = new TestRun(info, quiet);
  const moved = [{ connections: 0, bytes: 0 }, { connections: 0, bytes: 0 }];
  const specs = moved.map((_, id) => StreamSpec.parse({ kind: "tcp-recv", id, listen: { host: "127.0.0.1", port: 0 } }));
  run.attach(new PolledPlane(specs, (i) => moved[i]!), "recv");
  const signal = new AbortController().signal;
  const states: string[] = [];
  const connected = run.reached("every stream connected", signal).then((ok) => states.push(`connected ${ok}`));
  const byte = run.reached("a byte moved", signal).then((ok) => states.push(`byte ${ok}`));
  moved[0]!.connections = 1;
  await Bun.sleep(20);
  expect(states).toEqual([]); // one stream of two connected, no byte yet
  moved[1]!.connections = 1;
  await connected;
  moved[1]!.bytes = 1;
  await byte;
  expect(states).toEqual(["connected true", "byte true"]);
  moved[0]!.connections = 0;
  const stop = new AbortController();
  const waiting = run.reached("every stream connected", stop.signal);
  stop.abort();
  expect(await waiting).toBe(false);
  run.finish();
});

test("measured().reported(): the reporting side's streams over the window, the senders' left out", () => {
  const run = new TestRun(info, quiet);
  const rx = polled("tcp-recv", 2);
  const tx = polled("tcp-recv", 1);
  run.attach(tx.plane, "send");
  run.attach(rx.plane, "recv");
  expect(run.measured().reported()).toEqual([]); // before the window: nothing reported
  rx.moved[0]!.bytes = 50;
  run.beginMeasuring();
  rx.moved[0]!.bytes += 100;
  rx.moved[1]!.bytes = 7;
  tx.moved[0]!.bytes = 1000;
  run.endMeasuring();
  expect(run.measured().reported().map((s) => s.bytes)).toEqual([100, 7]);
  run.finish();
});

test("endsAtLastByte: the window closes where the streams last moved a byte, not at the later end call", async () => {
  const run = new TestRun(info, quiet, { endsAtLastByte: true });
  const { plane, moved } = polled("tcp-recv", 1);
  run.attach(plane, "recv");
  run.beginMeasuring();
  moved[0]!.bytes = 1000;
  await Bun.sleep(30);
  const lastMoved = performance.now();
  await Bun.sleep(300); // the sender holds its connection open, sending nothing, then closes
  run.endMeasuring();
  const w = run.measured();
  expect(w.streams(plane)![0]!.bytes).toBe(1000);
  expect(w.seconds).toBeLessThan((lastMoved - w.from.atMs) / 1000 + 0.1);
  run.finish();
});

test("current(): a client's request/response window has its (empty) latency histogram from its first instant", () => {
  const run = new TestRun({ ...info, test: "rr" }, quiet);
  const moved = { bytes: 0, transactions: 0 };
  const spec = StreamSpec.parse({ kind: "rr-client", id: 0, transport: "tcp", connect: { host: "127.0.0.1", port: 9 }, requestSize: 1, responseSize: 1 });
  const plane = new PolledPlane([spec], () => moved);
  run.attach(plane, "client");
  run.cutsIntervals();
  run.beginMeasuring();
  const empty = run.current()!;
  expect(empty.sum.transactions).toBe(0);
  expect(count(empty.latency!.histogram)).toBe(0);
  expect(empty.latency!.sumUs).toBe(0);
  moved.transactions = 1;
  moved.bytes = 2;
  plane.time(0, 40);
  const one = run.current()!;
  expect([one.sum.transactions, count(one.latency!.histogram), one.latency!.sumUs]).toEqual([1, 1, 40]);
  run.finish();
});
