import { describe, expect, test } from "bun:test";
import { parseProcStat } from "./proc-stat.ts";
import { fixture } from "./testdata/fixture.ts";

describe("parseProcStat", () => {
  test("captured /proc/stat (kernel 6.18, 2 CPUs, 10 columns)", () => {
    const s = parseProcStat(fixture("proc-stat.txt"));
    expect(s?.total).toEqual({ user: 2852, nice: 0, system: 1831, idle: 72733, iowait: 426, irq: 0, softirq: 66, steal: 8 });
    expect(s?.perCpu).toEqual([
      { cpu: 0, times: { user: 1031, nice: 0, system: 712, idle: 37178, iowait: 23, irq: 0, softirq: 29, steal: 3 } },
      { cpu: 1, times: { user: 1821, nice: 0, system: 1119, idle: 35555, iowait: 402, irq: 0, softirq: 37, steal: 5 } },
    ]);
  });

  test("old kernel with 4 columns and a hot-unplugged CPU: missing modes absent, gaps kept", () => {
    const s = parseProcStat(fixture("proc-stat-4-columns.txt"));
    expect(s?.total).toEqual({ user: 100, nice: 5, system: 50, idle: 1000 });
    expect(s?.perCpu.map((c) => c.cpu)).toEqual([0, 2]);
    expect(s?.perCpu[1]?.times).toEqual({ user: 40, nice: 0, system: 20, idle: 600 });
  });

  test("7 columns (no steal) and trailing blanks", () => {
    const s = parseProcStat(fixture("proc-stat-7-columns.txt"));
    expect(s?.total).toEqual({ user: 1, nice: 2, system: 3, idle: 4, iowait: 5, irq: 6, softirq: 7 });
    expect(s?.perCpu[0]?.times.steal).toBeUndefined();
  });

  test("no aggregate line -> undefined", () => {
    expect(parseProcStat("cpu0 1 2 3 4\nintr 5\n")).toBeUndefined();
    expect(parseProcStat("")).toBeUndefined();
  });
});
