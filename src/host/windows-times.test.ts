import { expect, test } from "bun:test";
import { processorTimes, processTimes } from "./windows-times.ts";

// Two CPUs (513.8 s idle = 51380 ticks) as NtQuerySystemInformation returned them under Wine (100 ns units): idle, kernel, user, dpc, interrupt, count.
const RAW = new BigUint64Array([5138000000n, 6693600000n, 1804400000n, 0n, 0n, 0n, 4823400000n, 6614000000n, 1867200000n, 100000n, 200000n, 7n]);

test("processor records become per-CPU modes in USER_HZ ticks, kernel time net of idle, DPC and interrupts", () => {
  const s = processorTimes(RAW)!;
  expect(s.perCpu).toHaveLength(2);
  expect(s.perCpu[0]!.times).toEqual({ user: 18044, system: 15556, idle: 51380, irq: 0, softirq: 0 });
  expect(s.perCpu[1]!.times.softirq).toBeCloseTo(1);
  expect(s.perCpu[1]!.times.irq).toBeCloseTo(2);
  expect(s.perCpu[1]!.times.system).toBeCloseTo(66140 - 48234 - 3);
  expect(s.total.idle).toBeCloseTo(51380 + 48234);
  expect(s.total.user).toBeCloseTo(18044 + 18672);
});

test("no records: no CPU figures (n/a, never 0)", () => {
  expect(processorTimes(new BigUint64Array(0))).toBeUndefined();
});

test("process times: 100 ns units to ticks", () => {
  expect(processTimes(42, { kernel: 700000n, user: 1_500_000n })).toMatchObject({ pid: 42, utime: 15, stime: 7 });
});
