import { expect, test } from "bun:test";
import { parseProcStat } from "../../src/host/proc-stat.ts";
import { cpuStatsBetween } from "./cpu-meter.ts";

test("netperf's /proc/stat method: per-CPU busy share, averaged; the busiest CPU is the peak", () => {
  const a = parseProcStat("cpu  0 0 0 0 0 0 0 0\ncpu0 100 0 100 800 0 0 0 0\ncpu1 0 0 0 1000 0 0 0 0\n")!;
  // cpu0: +50 user, +50 system, +100 idle → 50 % busy; cpu1: +10 softirq, +190 idle → 5 % busy.
  const b = parseProcStat("cpu  0 0 0 0 0 0 0 0\ncpu0 150 0 150 900 0 0 0 0\ncpu1 0 0 0 1190 0 0 10 0\n")!;
  const s = cpuStatsBetween(a, b)!;
  expect(s.util).toBeCloseTo(27.5, 9);
  expect(s.user).toBeCloseTo(12.5, 9);
  expect(s.system).toBeCloseTo(12.5, 9);
  expect(s.softirq).toBeCloseTo(2.5, 9);
  expect([s.peakId, s.peakUtil, s.numCpus, s.method]).toEqual([0, 50, 2, 8]);
});

test("a CPU with no ticks in the window counts as idle, as in netperf", () => {
  const a = parseProcStat("cpu  0 0 0 0\ncpu0 10 0 0 10\ncpu1 5 0 0 5\n")!;
  const b = parseProcStat("cpu  0 0 0 0\ncpu0 20 0 0 10\ncpu1 5 0 0 5\n")!;
  expect(cpuStatsBetween(a, b)!.util).toBe(50);
});
