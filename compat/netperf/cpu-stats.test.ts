import { expect, test } from "bun:test";
import { parseProcStat } from "../../src/host/proc-stat.ts";
import { hostWindow } from "../../src/host/window.ts";
import { cpuStats } from "./cpu-stats.ts";

const window = (a: string, b: string) => hostWindow({ monotonicMs: 0, wallMs: 0, cpu: parseProcStat(a)! }, { monotonicMs: 1000, wallMs: 1000, cpu: parseProcStat(b)! });

test("netperf's /proc/stat method: per-CPU busy share, averaged; the busiest CPU is the peak", () => {
  // cpu0: +50 user, +50 system, +100 idle → 50 % busy; cpu1: +10 softirq, +190 idle → 5 % busy.
  const s = cpuStats(window("cpu  0 0 0 0 0 0 0 0\ncpu0 100 0 100 800 0 0 0 0\ncpu1 0 0 0 1000 0 0 0 0\n", "cpu  0 0 0 0 0 0 0 0\ncpu0 150 0 150 900 0 0 0 0\ncpu1 0 0 0 1190 0 0 10 0\n"))!;
  expect(s.util).toBeCloseTo(27.5, 9);
  expect(s.user).toBeCloseTo(12.5, 9);
  expect(s.system).toBeCloseTo(12.5, 9);
  expect(s.softirq).toBeCloseTo(2.5, 9);
  expect([s.peakId, s.peakUtil, s.numCpus, s.method]).toEqual([0, 50, 2, 8]);
});

test("a CPU with no ticks in the window counts as idle, as in netperf", () => {
  expect(cpuStats(window("cpu  0 0 0 0\ncpu0 10 0 0 10\ncpu1 5 0 0 5\n", "cpu  0 0 0 0\ncpu0 20 0 0 10\ncpu1 5 0 0 5\n"))!.util).toBe(50);
});

test("iowait counts as busy; no host window, no figures", () => {
  // +30 iowait, +70 idle: 30 % busy for netperf (top would say 0 %).
  expect(cpuStats(window("cpu  0 0 0 0 0\ncpu0 0 0 0 0 0\n", "cpu  0 0 0 70 30\ncpu0 0 0 0 70 30\n"))!.util).toBe(30);
  expect(cpuStats(undefined)).toBeUndefined();
});
