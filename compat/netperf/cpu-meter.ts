import { CPU_MODES, parseProcStat, type CpuTimes, type ProcStat } from "../../src/host/proc-stat.ts";
import { cpuModePercent, cpuNonIdleFraction } from "../../src/formulas.ts";
import { ProcFile } from "../../src/host/proc-file.ts";
import { CpuMethod } from "../../interop/netperf/constants.ts";
import type { CpuStats } from "./figures.ts";

/**
 * Host CPU utilisation the way netperf's /proc/stat method (cpu_method 8, 'S') reports it: per CPU, 100 % minus the
 * idle share of all ticks; the host figure and each mode are averages over the CPUs; the peak is the busiest CPU.
 */

export function cpuStatsBetween(a: ProcStat, b: ProcStat): CpuStats | undefined {
  const n = b.perCpu.length;
  if (n === 0) return undefined;
  const sum = { util: 0, user: 0, system: 0, iowait: 0, irq: 0, softirq: 0 };
  let peakUtil = -1;
  let peakId = -1;
  for (const end of b.perCpu) {
    const start = a.perCpu.find((c) => c.cpu === end.cpu);
    if (!start) continue;
    const d: CpuTimes = {};
    for (const m of CPU_MODES) d[m] = Math.max(0, (end.times[m] ?? 0) - (start.times[m] ?? 0));
    if (!CPU_MODES.some((m) => d[m]! > 0)) continue;
    const util = 100 * cpuNonIdleFraction(d);
    sum.util += util;
    sum.user += cpuModePercent(d, "user");
    sum.system += cpuModePercent(d, "system");
    sum.iowait += cpuModePercent(d, "iowait");
    sum.irq += cpuModePercent(d, "irq");
    sum.softirq += cpuModePercent(d, "softirq");
    if (util > peakUtil) {
      peakUtil = util;
      peakId = end.cpu;
    }
  }
  return {
    util: sum.util / n,
    user: sum.user / n,
    system: sum.system / n,
    iowait: sum.iowait / n,
    irq: sum.irq / n,
    softirq: sum.softirq / n,
    peakUtil,
    peakId,
    method: CpuMethod.PROC_STAT,
    numCpus: n,
  };
}

/** Reads /proc/stat now; undefined off Linux. */
export function readProcStat(): ProcStat | undefined {
  const f = ProcFile.open("/proc/stat");
  if (!f) return undefined;
  try {
    const text = f.read();
    return text === undefined ? undefined : parseProcStat(text);
  } finally {
    f.close();
  }
}

export function cpuCount(): number {
  return readProcStat()?.perCpu.length ?? 1;
}

/** A measurement window: `start()` now, `stop()` later gives the figures in between. */
export class CpuMeter {
  private readonly first = readProcStat();

  get available(): boolean {
    return this.first !== undefined;
  }

  /** Figures from the start until now (or until an earlier snapshot taken with `mark`). */
  stop(at?: ProcStat): CpuStats | undefined {
    const end = at ?? readProcStat();
    return this.first && end ? cpuStatsBetween(this.first, end) : undefined;
  }
}
