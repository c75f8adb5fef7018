import { readIfPresent } from "./link.ts";

/*
 * The CPU quota of the cgroup this process runs in (what a Kubernetes pod's CPU limit is) and how often it ran out:
 * cpu.stat's nr_periods / nr_throttled / throttled time, from the v1 cpu controller where one is mounted (a hybrid
 * host's v2 tree then has no cpu controller), else from the v2 tree.
 */

/** cpu.stat's throttling counters, cumulative; throttled_us is v2's throttled_usec or v1's throttled_time (ns) / 1000. */
export interface CgroupCpuStat {
  periods: number;
  throttled: number;
  throttled_us: number;
  /** The quota in cores (quota ÷ period) when one is set. */
  quota_cores?: number;
}

/** A cgroup's cpu.stat text (v1 or v2); undefined without the throttling counters (no cpu controller there). */
export function parseCgroupCpuStat(text: string): Omit<CgroupCpuStat, "quota_cores"> | undefined {
  const kv = new Map<string, number>();
  for (const line of text.split("\n")) {
    const [k, v] = line.trim().split(/\s+/);
    if (k && v !== undefined && /^\d+$/.test(v)) kv.set(k, Number(v));
  }
  const periods = kv.get("nr_periods");
  const throttled = kv.get("nr_throttled");
  const us = kv.get("throttled_usec") ?? (kv.has("throttled_time") ? kv.get("throttled_time")! / 1000 : undefined);
  if (periods === undefined || throttled === undefined || us === undefined) return undefined;
  return { periods, throttled, throttled_us: us };
}

/** v2 cpu.max ("max 100000", "5000 100000") in cores; undefined without a quota. */
export function parseCpuMax(text: string): number | undefined {
  const [quota, period] = text.trim().split(/\s+/);
  if (quota === undefined || quota === "max" || period === undefined) return undefined;
  const q = Number(quota), p = Number(period);
  return q > 0 && p > 0 ? q / p : undefined;
}

/** v1 cpu.cfs_quota_us (-1: none) and cpu.cfs_period_us in cores. */
export function parseCfsQuota(quotaText: string, periodText: string): number | undefined {
  const q = Number(quotaText.trim()), p = Number(periodText.trim());
  return q > 0 && p > 0 ? q / p : undefined;
}

/** Where this process's cgroup keeps its CPU files: v1's cpu controller directory first, else v2's. */
export interface CgroupCpuDir {
  version: 1 | 2;
  dir: string;
}

/**
 * From /proc/self/cgroup and /proc/self/mountinfo: the directory of this process's cgroup under the mount that
 * carries the cpu controller. A mount's root (a container's cgroup namespace sees its own root) is cut off the path.
 */
export function cgroupCpuDir(procCgroup: string, mountinfo: string): CgroupCpuDir | undefined {
  const paths = new Map<string, string>();
  for (const line of procCgroup.split("\n")) {
    const m = /^\d+:([^:]*):(.*)$/.exec(line.trim());
    if (m) for (const c of m[1]!.split(",")) paths.set(c, m[2]!);
  }
  let v1: CgroupCpuDir | undefined, v2: CgroupCpuDir | undefined;
  for (const line of mountinfo.split("\n")) {
    const [pre, post] = line.split(" - ");
    if (!pre || !post) continue;
    const f = pre.split(" ");
    const [fstype, , opts] = post.split(" ");
    const root = f[3], at = f[4];
    if (!root || !at) continue;
    const under = (path: string | undefined) => {
      if (path === undefined) return undefined;
      const rel = root !== "/" && path.startsWith(root) ? path.slice(root.length) : path;
      return `${at}${rel === "/" ? "" : rel}`;
    };
    if (fstype === "cgroup" && opts?.split(",").includes("cpu")) {
      const dir = under(paths.get("cpu"));
      if (dir) v1 ??= { version: 1, dir };
    } else if (fstype === "cgroup2") {
      const dir = under(paths.get(""));
      if (dir) v2 ??= { version: 2, dir };
    }
  }
  return v1 ?? v2;
}

/** This process's cgroup CPU directory and its quota now; undefined off Linux or where neither tree is readable. */
export function findCgroupCpu(): { statPath: string; quota_cores?: number } | undefined {
  const proc = readIfPresent("/proc/self/cgroup");
  const mounts = readIfPresent("/proc/self/mountinfo");
  if (proc === undefined || mounts === undefined) return undefined;
  const found = cgroupCpuDir(proc, mounts);
  if (!found) return undefined;
  const stat = readIfPresent(`${found.dir}/cpu.stat`);
  if (stat === undefined || !parseCgroupCpuStat(stat)) return undefined;
  const quota =
    found.version === 2
      ? parseCpuMax(readIfPresent(`${found.dir}/cpu.max`) ?? "")
      : parseCfsQuota(readIfPresent(`${found.dir}/cpu.cfs_quota_us`) ?? "", readIfPresent(`${found.dir}/cpu.cfs_period_us`) ?? "");
  return quota === undefined ? { statPath: `${found.dir}/cpu.stat` } : { statPath: `${found.dir}/cpu.stat`, quota_cores: quota };
}
