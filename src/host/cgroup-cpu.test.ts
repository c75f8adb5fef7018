import { describe, expect, test } from "bun:test";
import { cgroupCpuDir, parseCfsQuota, parseCgroupCpuStat, parseCpuMax } from "./cgroup-cpu.ts";

/**
 * cgroup v1 cpu.stat as read here (kernel 6.18, a child cgroup at 5 % of a core under a serve), and v2's as
 * Documentation/admin-guide/cgroup-v2.rst lays it out (usage first, then the bandwidth counters).
 */
const V1 = "nr_periods 394\nnr_throttled 190\nthrottled_time 16867921253\nnr_bursts 0\nburst_time 0\n";
const V2 = "usage_usec 8335557\nuser_usec 4987036\nsystem_usec 3348521\nnr_periods 50\nnr_throttled 47\nthrottled_usec 4512331\nnr_bursts 0\nburst_usec 0\n";

describe("cpu.stat", () => {
  test("v1 throttled_time is ns, v2 throttled_usec µs", () => {
    expect(parseCgroupCpuStat(V1)).toEqual({ periods: 394, throttled: 190, throttled_us: 16867921.253 });
    expect(parseCgroupCpuStat(V2)).toEqual({ periods: 50, throttled: 47, throttled_us: 4512331 });
  });
  test("a v2 tree without the cpu controller has usage only: no throttling figures", () => {
    expect(parseCgroupCpuStat("usage_usec 1863032000\nuser_usec 1131660000\nsystem_usec 731372000\n")).toBeUndefined();
  });
});

describe("quota", () => {
  test("v2 cpu.max and v1 cfs quota/period, in cores; none when unlimited", () => {
    expect(parseCpuMax("5000 100000\n")).toBe(0.05);
    expect(parseCpuMax("max 100000\n")).toBeUndefined();
    expect(parseCfsQuota("250000\n", "100000\n")).toBe(2.5);
    expect(parseCfsQuota("-1\n", "100000\n")).toBeUndefined();
  });
});

describe("the cgroup's directory", () => {
  // This machine: v1 controllers each mounted on their own, v2 beside them without cpu (hybrid).
  const hybridMounts = [
    "30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755",
    "31 30 0:28 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu",
    "32 30 0:29 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct",
    "40 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw",
  ].join("\n");
  test("v1's cpu controller first, at the process's path under it", () => {
    expect(cgroupCpuDir("4:memory:/x\n2:cpuacct:/\n1:cpu:/apdiag-1\n0::/\n", hybridMounts)).toEqual({ version: 1, dir: "/sys/fs/cgroup/cpu/apdiag-1" });
    expect(cgroupCpuDir("1:cpu,cpuacct:/kubepods/pod1/c1\n", "31 30 0:28 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct")).toEqual({
      version: 1,
      dir: "/sys/fs/cgroup/cpu,cpuacct/kubepods/pod1/c1",
    });
  });
  test("v2 alone, and a container whose cgroup namespace mounts its own cgroup as the root", () => {
    const v2 = "25 21 0:24 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate";
    expect(cgroupCpuDir("0::/system.slice/anyperf.service\n", v2)).toEqual({ version: 2, dir: "/sys/fs/cgroup/system.slice/anyperf.service" });
    expect(cgroupCpuDir("0::/\n", v2)).toEqual({ version: 2, dir: "/sys/fs/cgroup" });
    expect(cgroupCpuDir("0::/kubepods/pod1/c1\n", "25 21 0:24 /kubepods/pod1/c1 /sys/fs/cgroup ro - cgroup2 cgroup2 rw")).toEqual({ version: 2, dir: "/sys/fs/cgroup" });
  });
  test("no cgroup mount: nothing", () => {
    expect(cgroupCpuDir("0::/\n", "30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755")).toBeUndefined();
  });
});
