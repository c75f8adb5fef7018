/**
 * CPU figures where there is neither /proc nor a Windows API (macOS): node:os cpus() gives each CPU's cumulative
 * user, nice, sys, idle and irq milliseconds (host_processor_info on macOS), and process.cpuUsage() this process's
 * user and system microseconds (getrusage). Windows of these are differences, as of /proc's ticks; modes the OS does
 * not count there (iowait, softirq, steal) stay absent, so they read n/a, never 0.
 */
import type { ProcStat } from "./proc-stat.ts";
import { USER_HZ, type ProcessStat } from "./process-stat.ts";

export interface OsCpu {
  times: { user: number; nice: number; sys: number; idle: number; irq: number };
}

const msToTicks = (ms: number) => (ms * USER_HZ) / 1000;

/** os.cpus() as /proc/stat modes in USER_HZ ticks; undefined when the OS lists no CPU. */
export function osCpuTimes(cpus: readonly OsCpu[]): ProcStat | undefined {
  if (cpus.length === 0) return undefined;
  const total = { user: 0, nice: 0, system: 0, idle: 0, irq: 0 };
  const perCpu: ProcStat["perCpu"] = cpus.map(({ times: t }, cpu) => {
    const times = { user: msToTicks(t.user), nice: msToTicks(t.nice), system: msToTicks(t.sys), idle: msToTicks(t.idle), irq: msToTicks(t.irq) };
    for (const k of Object.keys(total) as (keyof typeof total)[]) total[k] += times[k];
    return { cpu, times };
  });
  return { total, perCpu };
}

/** process.cpuUsage() (µs) as the /proc/self/stat figures a window uses. */
export function osProcessTimes(pid: number, usage: { user: number; system: number }): ProcessStat {
  return { pid, comm: "anyperf", state: "R", utime: (usage.user * USER_HZ) / 1e6, stime: (usage.system * USER_HZ) / 1e6, numThreads: 0 };
}
