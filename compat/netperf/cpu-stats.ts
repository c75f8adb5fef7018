import { CpuMethod } from "../../interop/netperf/constants.ts";
import { onlineCpus } from "../../src/host/sampler.ts";
import type { HostWindow } from "../../src/host/window.ts";
import type { CpuStats } from "./figures.ts";

/**
 * Host CPU utilisation the way netperf's /proc/stat method (cpu_method 8, 'S') reports it, from the host window of
 * the Test's data phase: per CPU, 100 % minus the idle share of all ticks (iowait counts as busy); the host figure
 * and each mode are averages over the CPUs, a CPU that did not tick counting as idle; the peak is the busiest CPU.
 */
export function cpuStats(host: HostWindow | undefined): CpuStats | undefined {
  const perCpu = host?.perCpu ?? [];
  const n = host?.cores ?? perCpu.length;
  if (n === 0) return undefined;
  const sum = { util: 0, user: 0, system: 0, iowait: 0, irq: 0, softirq: 0 };
  let peakUtil = -1;
  let peakId = -1;
  for (const c of perCpu) {
    const util = 100 - (c.idle ?? 0);
    sum.util += util;
    sum.user += c.user ?? 0;
    sum.system += c.system ?? 0;
    sum.iowait += c.iowait ?? 0;
    sum.irq += c.irq ?? 0;
    sum.softirq += c.softirq ?? 0;
    if (util > peakUtil) {
      peakUtil = util;
      peakId = c.cpu;
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

/** netperf's CPU count (online processors); 1 where the host cannot be read. */
export function cpuCount(): number {
  return onlineCpus() ?? 1;
}
