import { parseCpuMhz } from "./cpuinfo.ts";
import { parseInterrupts } from "./interrupts.ts";
import { parseNetDev } from "./net-dev.ts";
import { ProcFile } from "./proc-file.ts";
import { parseProcStat, type ProcStat } from "./proc-stat.ts";
import { parseProcessStat, type ProcessStat } from "./process-stat.ts";
import type { HostSample } from "./sample.ts";
import { parseSnmp } from "./snmp.ts";
import { win32Times } from "../sockopt/win32-times.ts";
import { processorTimes, processTimes } from "./windows-times.ts";
import { cpus } from "node:os";
import { osCpuTimes, osProcessTimes } from "./os-cpu-times.ts";
import { findCgroupCpu, parseCgroupCpuStat } from "./cgroup-cpu.ts";

/** The /proc files a sampler can read; /proc/cpuinfo and /proc/interrupts cost milliseconds on large hosts. */
export const HOST_SOURCES = {
  cpu: "/proc/stat",
  process: "/proc/self/stat",
  mhz: "/proc/cpuinfo",
  nics: "/proc/net/dev",
  snmp: "/proc/net/snmp",
  netstat: "/proc/net/netstat",
  interrupts: "/proc/interrupts",
  /** The same layout as /proc/interrupts: Linux's deferred work per kind (NTttcp's DPCs are its Windows kin). */
  softirqs: "/proc/softirqs",
  /** The cgroup's cpu.stat, found through this file (cgroup-cpu.ts). */
  cgroup: "/proc/self/cgroup",
} as const;
export type HostSource = keyof typeof HOST_SOURCES;

export interface HostSampler {
  /** Reads every open file once. */
  sample(): HostSample;
  /** Closes the files; later samples carry only timestamps. */
  close(): void;
}

/**
 * Opens the /proc files once and re-reads them with pread on every sample. undefined off Linux or when /proc/stat
 * cannot be opened (no procfs mounted); a single missing file only leaves its part of each sample absent.
 */
export function createHostSampler(
  sources: readonly HostSource[] = Object.keys(HOST_SOURCES) as HostSource[],
): HostSampler | undefined {
  if (process.platform === "win32") return windowsSampler(sources);
  if (process.platform === "darwin") return osSampler(sources);
  if (process.platform !== "linux") return undefined;
  const files = new Map<HostSource, ProcFile>();
  // The cgroup is found when the sampler opens: a process moved into another cgroup is read there from its next test.
  const cgroup = sources.includes("cgroup") ? findCgroupCpu() : undefined;
  for (const s of sources) {
    const f = ProcFile.open(s === "cgroup" ? (cgroup?.statPath ?? "") : HOST_SOURCES[s]);
    if (f) files.set(s, f);
  }
  if (!files.has("cpu") && sources.includes("cpu")) {
    for (const f of files.values()) f.close();
    return undefined;
  }
  const text = (s: HostSource) => files.get(s)?.read();
  const parsed = <T>(s: HostSource, parse: (t: string) => T): T | undefined => {
    const t = text(s);
    return t === undefined ? undefined : parse(t);
  };
  return {
    sample() {
      const sample: HostSample = { monotonicMs: performance.now(), wallMs: Date.now() };
      const cpu = parsed("cpu", parseProcStat);
      if (cpu) sample.cpu = cpu;
      const proc = parsed("process", parseProcessStat);
      if (proc) sample.process = proc;
      const mhz = parsed("mhz", parseCpuMhz);
      if (mhz && mhz.length > 0) sample.mhz = mhz;
      const nics = parsed("nics", parseNetDev);
      if (nics) sample.nics = nics;
      const snmp = parsed("snmp", parseSnmp);
      if (snmp) sample.snmp = snmp;
      const netstat = parsed("netstat", parseSnmp);
      if (netstat) sample.netstat = netstat;
      const interrupts = parsed("interrupts", parseInterrupts);
      if (interrupts) sample.interrupts = interrupts;
      const softirqs = parsed("softirqs", parseInterrupts);
      if (softirqs) sample.softirqs = softirqs;
      const cpuStat = parsed("cgroup", parseCgroupCpuStat);
      if (cpuStat) sample.cgroupCpu = cgroup?.quota_cores === undefined ? cpuStat : { ...cpuStat, quota_cores: cgroup.quota_cores };
      return sample;
    },
    close() {
      for (const f of files.values()) f.close();
      files.clear();
    },
  };
}

/** Windows: CPU modes per CPU and this process's times (loadWin32Times ran at start-up); no NIC or TCP counters. */
function windowsSampler(sources: readonly HostSource[]): HostSampler | undefined {
  const t = win32Times();
  if (!t) return undefined;
  return cpuOnlySampler(sources, () => processorTimes(t.processors()), () => processTimes(process.pid, t.process()));
}

/** macOS: the same two figures from node:os and process.cpuUsage(). */
function osSampler(sources: readonly HostSource[]): HostSampler | undefined {
  return cpuOnlySampler(sources, () => osCpuTimes(cpus()), () => osProcessTimes(process.pid, process.cpuUsage()));
}

/** Where the OS has no /proc: CPU modes per CPU and this process's times, nothing else. */
function cpuOnlySampler(sources: readonly HostSource[], host: () => ProcStat | undefined, own: () => ProcessStat): HostSampler | undefined {
  if (!sources.includes("cpu")) return undefined;
  return {
    sample() {
      const sample: HostSample = { monotonicMs: performance.now(), wallMs: Date.now() };
      const cpu = host();
      if (cpu) sample.cpu = cpu;
      if (sources.includes("process")) sample.process = own();
      return sample;
    },
    close() {},
  };
}

/**
 * Processors online now, as sysconf(_SC_NPROCESSORS_ONLN) counts them (the cpuN lines of /proc/stat); undefined
 * where the host cannot be read.
 */
export function onlineCpus(): number | undefined {
  const s = createHostSampler(["cpu"]);
  try {
    return s?.sample().cpu?.perCpu.length;
  } finally {
    s?.close();
  }
}
