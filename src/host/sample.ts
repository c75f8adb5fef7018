import type { Interrupts } from "./interrupts.ts";
import type { NicCounters } from "./net-dev.ts";
import type { ProcStat } from "./proc-stat.ts";
import type { ProcessStat } from "./process-stat.ts";
import type { SnmpTables } from "./snmp.ts";
import type { CgroupCpuStat } from "./cgroup-cpu.ts";

/**
 * Raw cumulative host counters at one instant. Every part is absent when its file could not be read; a window
 * (src/host/window.ts) is the difference of two samples from the same sampler. Plain data, so it can be posted
 * between threads.
 */
export interface HostSample {
  /** performance.now() in ms: only differences between samples taken on the same thread mean anything. */
  monotonicMs: number;
  /** Date.now() in ms, for timestamps in output. */
  wallMs: number;
  /** /proc/stat: CPU jiffies per mode, aggregate and per CPU. */
  cpu?: ProcStat;
  /** /proc/self/stat: this process's CPU ticks, all threads. */
  process?: ProcessStat;
  /** /proc/cpuinfo `cpu MHz` per processor (absent when the kernel prints none). */
  mhz?: number[];
  /** /proc/net/dev, by interface name. */
  nics?: Record<string, NicCounters>;
  /** /proc/net/snmp (Tcp, Udp, Ip, ...). */
  snmp?: SnmpTables;
  /** /proc/net/netstat (TcpExt, IpExt). */
  netstat?: SnmpTables;
  /** /proc/interrupts. */
  interrupts?: Interrupts;
  /** /proc/softirqs (its layout is /proc/interrupts'). */
  softirqs?: Interrupts;
  /** This process's cgroup's cpu.stat throttling counters and its quota. */
  cgroupCpu?: CgroupCpuStat;
}
