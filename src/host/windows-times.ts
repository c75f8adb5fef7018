import { PROCESSOR_RECORD_WORDS } from "../sockopt/win32-times.ts";
import type { CpuTimes, ProcStat } from "./proc-stat.ts";
import { USER_HZ, type ProcessStat } from "./process-stat.ts";

/** Windows counts CPU time in 100 ns units; our windows count USER_HZ ticks, as /proc does. */
const UNITS_PER_TICK = 10_000_000 / USER_HZ;

const ticks = (v: bigint) => Number(v) / UNITS_PER_TICK;

/**
 * SYSTEM_PROCESSOR_PERFORMANCE_INFORMATION records as /proc/stat modes. Kernel time includes idle, DPC and
 * interrupt time; DPCs are Windows' deferred interrupt work, what Linux counts as softirq.
 */
export function processorTimes(raw: BigUint64Array): ProcStat | undefined {
  const count = Math.floor(raw.length / PROCESSOR_RECORD_WORDS);
  if (count === 0) return undefined;
  const perCpu: ProcStat["perCpu"] = [];
  const total: Required<Pick<CpuTimes, "user" | "system" | "idle" | "irq" | "softirq">> = { user: 0, system: 0, idle: 0, irq: 0, softirq: 0 };
  for (let cpu = 0; cpu < count; cpu++) {
    const o = cpu * PROCESSOR_RECORD_WORDS;
    const [idle, kernel, user, dpc, interrupt] = [0, 1, 2, 3, 4].map((i) => ticks(raw[o + i]!)) as [number, number, number, number, number];
    const times = { user, system: Math.max(0, kernel - idle - dpc - interrupt), idle, irq: interrupt, softirq: dpc };
    for (const k of Object.keys(total) as (keyof typeof total)[]) total[k] += times[k];
    perCpu.push({ cpu, times });
  }
  return { total, perCpu };
}

/** GetProcessTimes as the /proc/self/stat figures a window uses. */
export function processTimes(pid: number, t: { kernel: bigint; user: bigint }): ProcessStat {
  return { pid, comm: "anyperf", state: "R", utime: ticks(t.user), stime: ticks(t.kernel), numThreads: 0 };
}
