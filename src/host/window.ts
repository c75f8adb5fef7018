import { z } from "zod";
import { bytesPerSecond, cpuBusyPercent, cpuModePercent, cpuNonIdleFraction, eventsPerSecond, mean, packetsPerSecond, processCpuPercent } from "../formulas.ts";
import type { Interrupts } from "./interrupts.ts";
import type { NicCounters } from "./net-dev.ts";
import { CPU_MODES, type CpuTimes } from "./proc-stat.ts";
import { USER_HZ } from "./process-stat.ts";
import type { HostSample } from "./sample.ts";
import type { SnmpTables } from "./snmp.ts";

/*
 * A window is the difference of two samples. Every figure that cannot be read (file missing, counter absent, counter
 * went backwards, no time passed) is left out, never reported as 0: a 0 would claim an idle CPU or a clean link.
 */

const Percent = z.number();
const Count = z.number().nonnegative();

/** Share of CPU time per mode, in %, over the window; busy = 100 − idle − iowait. */
export const CpuPercent = z.object({
  user: Percent.optional(),
  nice: Percent.optional(),
  system: Percent.optional(),
  idle: Percent.optional(),
  iowait: Percent.optional(),
  irq: Percent.optional(),
  softirq: Percent.optional(),
  steal: Percent.optional(),
  busy: Percent.optional(),
});
export type CpuPercent = z.infer<typeof CpuPercent>;

export const NicWindow = z.object({
  rxBytes: Count.optional(),
  rxPackets: Count.optional(),
  rxErrs: Count.optional(),
  rxDrop: Count.optional(),
  txBytes: Count.optional(),
  txPackets: Count.optional(),
  txErrs: Count.optional(),
  txDrop: Count.optional(),
  rxBytesPerSecond: Count.optional(),
  rxPacketsPerSecond: Count.optional(),
  txBytesPerSecond: Count.optional(),
  txPacketsPerSecond: Count.optional(),
});
export type NicWindow = z.infer<typeof NicWindow>;

/** Counter deltas from the Tcp: section of /proc/net/snmp (system-wide, like ntttcp's). */
export const TcpWindow = z.object({
  retransSegs: Count.optional(),
  inSegs: Count.optional(),
  outSegs: Count.optional(),
  attemptFails: Count.optional(),
  activeOpens: Count.optional(),
  passiveOpens: Count.optional(),
});
/** Retransmission kinds from TcpExt: in /proc/net/netstat (ntttcp --show-tcp-retrans). */
export const TcpExtWindow = z.object({
  lostRetransmit: Count.optional(),
  synRetrans: Count.optional(),
  fastRetrans: Count.optional(),
  forwardRetrans: Count.optional(),
  slowStartRetrans: Count.optional(),
  retransFail: Count.optional(),
});
/** Udp: section of /proc/net/snmp. */
export const UdpWindow = z.object({
  inDatagrams: Count.optional(),
  outDatagrams: Count.optional(),
  inErrors: Count.optional(),
  rcvbufErrors: Count.optional(),
  sndbufErrors: Count.optional(),
  noPorts: Count.optional(),
});

export const InterruptLineWindow = z.object({ id: z.string(), description: z.string(), count: Count });
export type InterruptLineWindow = z.infer<typeof InterruptLineWindow>;

export const InterruptsWindow = z.object({
  /** All lines of /proc/interrupts summed over CPUs (ntttcp's total). */
  total: Count,
  perSecond: Count.optional(),
  /** Only the lines that moved; `description` lets a caller sum lines naming a device (ntttcp --show-dev-interrupts). */
  lines: z.array(InterruptLineWindow),
});
export type InterruptsWindow = z.infer<typeof InterruptsWindow>;

/**
 * What cycles/byte needs besides the byte count (src/formulas.ts):
 * cycles/byte = mhz · 1e6 · busyFraction · cores · seconds / bytes.
 * busyFraction is ntttcp's: 1 − idle/total over the aggregate /proc/stat line, so iowait counts as busy here
 * (unlike CpuPercent.busy).
 */
export const CyclesInputs = z.object({
  mhz: z.number().positive(),
  busyFraction: z.number().min(0).max(1),
  cores: z.number().int().positive(),
  seconds: z.number().positive(),
});
export type CyclesInputs = z.infer<typeof CyclesInputs>;

/** This process's cgroup's CPU quota over the window (cpu.stat): periods with runnable tasks, those it ran out of quota. */
export const CgroupWindow = z.object({
  periods: Count,
  throttled: Count,
  throttled_us: Count,
  /** The quota, in cores (quota ÷ period); absent when unlimited. */
  quota_cores: z.number().positive().optional(),
});
export type CgroupWindow = z.infer<typeof CgroupWindow>;

export const HostWindow = z.object({
  seconds: z.number().nonnegative(),
  /** `cpuN` lines in /proc/stat; absent when the count changed during the window (CPU hotplug). */
  cores: z.number().int().positive().optional(),
  cpu: CpuPercent.optional(),
  perCpu: z.array(CpuPercent.extend({ cpu: z.number().int().nonnegative() })).optional(),
  /** This process, all threads; 100 = one core. */
  process: z.object({ total: Percent, user: Percent, system: Percent }).optional(),
  /** Mean `cpu MHz` over all processors and both samples. */
  mhz: z.number().positive().optional(),
  /** The first processor's `cpu MHz` at the end of the window (what ntttcp-for-linux prints as cpu speed). */
  mhzFirst: z.number().positive().optional(),
  cycles: CyclesInputs.optional(),
  nics: z.record(z.string(), NicWindow).optional(),
  tcp: TcpWindow.optional(),
  tcpExt: TcpExtWindow.optional(),
  udp: UdpWindow.optional(),
  interrupts: InterruptsWindow.optional(),
  /** /proc/softirqs over the window, every kind summed (ntttcp's Windows DPC figures). */
  softirqs: InterruptsWindow.optional(),
  cgroup: CgroupWindow.optional(),
});
export type HostWindow = z.infer<typeof HostWindow>;

/** b − a, or undefined when either is missing or the counter went backwards (reset, interface re-created). */
function delta(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined || b === undefined || b < a) return undefined;
  return b - a;
}

/** Assigns only defined values, so absent figures stay absent keys in the JSON. */
function put<T extends object, K extends keyof T>(obj: T, key: K, value: T[K] | undefined): void {
  if (value !== undefined) obj[key] = value;
}

/** Jiffies per mode between two samples; a mode missing from either or gone backwards is left out. */
function jiffyDeltas(a: CpuTimes, b: CpuTimes): CpuTimes {
  const d: CpuTimes = {};
  for (const mode of CPU_MODES) put(d, mode, delta(a[mode], b[mode]));
  return d;
}

function cpuPercent(d: CpuTimes): CpuPercent | undefined {
  if (!CPU_MODES.some((mode) => (d[mode] ?? 0) > 0)) return undefined;
  const out: CpuPercent = {};
  for (const mode of CPU_MODES) put(out, mode, d[mode] === undefined ? undefined : cpuModePercent(d, mode));
  if (d.idle !== undefined) out.busy = cpuBusyPercent(d);
  return out;
}

function nicWindow(a: NicCounters, b: NicCounters, seconds: number): NicWindow {
  const out: NicWindow = {};
  for (const k of Object.keys(b) as (keyof NicCounters)[]) put(out, k, delta(a[k], b[k]));
  if (seconds > 0) {
    put(out, "rxBytesPerSecond", out.rxBytes === undefined ? undefined : bytesPerSecond(out.rxBytes, seconds));
    put(out, "rxPacketsPerSecond", out.rxPackets === undefined ? undefined : packetsPerSecond(out.rxPackets, seconds));
    put(out, "txBytesPerSecond", out.txBytes === undefined ? undefined : bytesPerSecond(out.txBytes, seconds));
    put(out, "txPacketsPerSecond", out.txPackets === undefined ? undefined : packetsPerSecond(out.txPackets, seconds));
  }
  return out;
}

/** Deltas of named counters of one section, renamed; undefined when the section is missing in either sample. */
function tableWindow<K extends string>(
  a: SnmpTables | undefined,
  b: SnmpTables | undefined,
  section: string,
  names: Record<K, string>,
): Partial<Record<K, number>> | undefined {
  const ta = a?.[section];
  const tb = b?.[section];
  if (!ta || !tb) return undefined;
  const out: Partial<Record<K, number>> = {};
  for (const [key, name] of Object.entries(names) as [K, string][]) put(out, key, delta(ta[name], tb[name]));
  return out;
}

/** The host's activity between two samples of the same sampler (a earlier than b). */
export function hostWindow(a: HostSample, b: HostSample): HostWindow {
  const seconds = Math.max(0, (b.monotonicMs - a.monotonicMs) / 1000);
  const w: HostWindow = { seconds };

  const cpuDelta = a.cpu && b.cpu ? jiffyDeltas(a.cpu.total, b.cpu.total) : undefined;
  if (a.cpu && b.cpu && cpuDelta) {
    if (a.cpu.perCpu.length === b.cpu.perCpu.length && b.cpu.perCpu.length > 0) w.cores = b.cpu.perCpu.length;
    put(w, "cpu", cpuPercent(cpuDelta));
    const before = new Map(a.cpu.perCpu.map((c) => [c.cpu, c.times]));
    const perCpu: NonNullable<HostWindow["perCpu"]> = [];
    for (const c of b.cpu.perCpu) {
      const prev = before.get(c.cpu);
      const p = prev && cpuPercent(jiffyDeltas(prev, c.times));
      if (p) perCpu.push({ cpu: c.cpu, ...p });
    }
    if (perCpu.length > 0) w.perCpu = perCpu;
  }

  if (a.process && b.process && a.process.pid === b.process.pid && seconds > 0) {
    const user = delta(a.process.utime, b.process.utime);
    const system = delta(a.process.stime, b.process.stime);
    if (user !== undefined && system !== undefined) {
      const pct = (ticks: number) => processCpuPercent(ticks, USER_HZ, seconds);
      w.process = { total: pct(user + system), user: pct(user), system: pct(system) };
    }
  }

  const mhz = [...(a.mhz ?? []), ...(b.mhz ?? [])];
  put(w, "mhz", mhz.length > 0 ? mean(mhz) : undefined);
  put(w, "mhzFirst", b.mhz?.[0]);

  if (w.mhz !== undefined && w.cores !== undefined && w.cpu?.idle !== undefined && cpuDelta && seconds > 0) {
    w.cycles = { mhz: w.mhz, busyFraction: cpuNonIdleFraction(cpuDelta), cores: w.cores, seconds };
  }

  if (a.nics && b.nics) {
    const nics: Record<string, NicWindow> = {};
    for (const [name, nb] of Object.entries(b.nics)) {
      const na = a.nics[name];
      if (na) nics[name] = nicWindow(na, nb, seconds);
    }
    w.nics = nics;
  }

  put(w, "tcp", tableWindow(a.snmp, b.snmp, "Tcp", {
    retransSegs: "RetransSegs",
    inSegs: "InSegs",
    outSegs: "OutSegs",
    attemptFails: "AttemptFails",
    activeOpens: "ActiveOpens",
    passiveOpens: "PassiveOpens",
  }));
  put(w, "tcpExt", tableWindow(a.netstat, b.netstat, "TcpExt", {
    lostRetransmit: "TCPLostRetransmit",
    synRetrans: "TCPSynRetrans",
    fastRetrans: "TCPFastRetrans",
    forwardRetrans: "TCPForwardRetrans",
    slowStartRetrans: "TCPSlowStartRetrans",
    retransFail: "TCPRetransFail",
  }));
  put(w, "udp", tableWindow(a.snmp, b.snmp, "Udp", {
    inDatagrams: "InDatagrams",
    outDatagrams: "OutDatagrams",
    inErrors: "InErrors",
    rcvbufErrors: "RcvbufErrors",
    sndbufErrors: "SndbufErrors",
    noPorts: "NoPorts",
  }));

  if (a.cgroupCpu && b.cgroupCpu) {
    const periods = delta(a.cgroupCpu.periods, b.cgroupCpu.periods);
    const throttled = delta(a.cgroupCpu.throttled, b.cgroupCpu.throttled);
    const us = delta(a.cgroupCpu.throttled_us, b.cgroupCpu.throttled_us);
    if (periods !== undefined && throttled !== undefined && us !== undefined) {
      w.cgroup = { periods, throttled, throttled_us: us };
      put(w.cgroup, "quota_cores", b.cgroupCpu.quota_cores);
    }
  }

  put(w, "interrupts", interruptsWindow(a.interrupts, b.interrupts, seconds));
  put(w, "softirqs", interruptsWindow(a.softirqs, b.softirqs, seconds));
  return w;
}

function interruptsWindow(a: Interrupts | undefined, b: Interrupts | undefined, seconds: number): InterruptsWindow | undefined {
  // A changed CPU count drops or adds whole columns, so per-line sums are not comparable across it.
  if (!a || !b || a.cpus !== b.cpus) return undefined;
  const before = new Map(a.lines.map((l) => [l.id, l.count]));
  let total = 0;
  const lines: InterruptLineWindow[] = [];
  for (const l of b.lines) {
    const d = delta(before.get(l.id), l.count);
    if (d === undefined) continue;
    total += d;
    if (d > 0) lines.push({ id: l.id, description: l.description, count: d });
  }
  const w: InterruptsWindow = { total, lines };
  if (seconds > 0) w.perSecond = eventsPerSecond(total, seconds);
  return w;
}
