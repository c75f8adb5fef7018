/** Columns of a `cpu` line of /proc/stat, in the kernel's order (guest time is already inside user and nice). */
export const CPU_MODES = ["user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal"] as const;
export type CpuMode = (typeof CPU_MODES)[number];

/** Jiffies (USER_HZ ticks) spent in each mode; a mode an older kernel does not print is absent. */
export type CpuTimes = Partial<Record<CpuMode, number>>;

export interface ProcStat {
  /** The aggregate `cpu` line: all CPUs. */
  total: CpuTimes;
  /** One entry per `cpuN` line (online CPUs only; numbers can have gaps after hot-unplug). */
  perCpu: { cpu: number; times: CpuTimes }[];
}

function times(fields: string[]): CpuTimes {
  const out: CpuTimes = {};
  CPU_MODES.forEach((mode, i) => {
    const f = fields[i];
    if (f === undefined) return;
    const v = Number(f);
    if (Number.isFinite(v)) out[mode] = v;
  });
  return out;
}

/** Parses /proc/stat; undefined when there is no aggregate `cpu` line. */
export function parseProcStat(text: string): ProcStat | undefined {
  let total: CpuTimes | undefined;
  const perCpu: ProcStat["perCpu"] = [];
  for (const line of text.split("\n")) {
    if (!line.startsWith("cpu")) continue;
    const [label = "", ...fields] = line.trim().split(/\s+/);
    if (label === "cpu") total = times(fields);
    else if (/^cpu\d+$/.test(label)) perCpu.push({ cpu: Number(label.slice(3)), times: times(fields) });
  }
  return total && { total, perCpu };
}
