import { expect, test } from "bun:test";
import { figures, TestRun } from "./test-run.ts";
import { blankCounters, HIST_BUCKETS, type StreamCounters } from "../counters.ts";
import { count, record } from "../histogram.ts";

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
