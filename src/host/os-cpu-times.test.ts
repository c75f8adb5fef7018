import { expect, test } from "bun:test";
import { osCpuTimes, osProcessTimes } from "./os-cpu-times.ts";

test("os.cpus() milliseconds become per-CPU modes in USER_HZ ticks (10 ms), summed over CPUs", () => {
  const s = osCpuTimes([
    { times: { user: 12_340, nice: 0, sys: 5_670, idle: 100_000, irq: 10 } },
    { times: { user: 1_000, nice: 20, sys: 2_000, idle: 90_000, irq: 0 } },
  ])!;
  expect(s.perCpu[0]!.times).toEqual({ user: 1234, nice: 0, system: 567, idle: 10_000, irq: 1 });
  expect(s.total).toEqual({ user: 1334, nice: 2, system: 767, idle: 19_000, irq: 1 });
  // Modes macOS does not count are absent (n/a), not 0.
  expect(s.total).not.toHaveProperty("softirq");
});

test("no CPU listed: no CPU figures", () => {
  expect(osCpuTimes([])).toBeUndefined();
});

test("process.cpuUsage() microseconds to ticks", () => {
  expect(osProcessTimes(7, { user: 1_500_000, system: 250_000 })).toMatchObject({ pid: 7, utime: 150, stime: 25 });
});
