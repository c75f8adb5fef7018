import { describe, expect, test } from "bun:test";
import type { HostSample } from "./sample.ts";
import { HostWindow, hostWindow } from "./window.ts";

const nic = (rxBytes: number, rxPackets: number, txBytes: number, txPackets: number) => ({
  rxBytes, rxPackets, rxErrs: 0, rxDrop: 0, txBytes, txPackets, txErrs: 0, txDrop: 0,
});

// Per-CPU deltas: cpu0 user 200 system 50 idle 100 iowait 40 irq 10; cpu1 user 100 system 50 idle 200 softirq 30
// steal 20. Each CPU moved 400 jiffies; the aggregate moved 800 and is their sum.
const a: HostSample = {
  monotonicMs: 1000,
  wallMs: 0,
  cpu: {
    total: { user: 100, nice: 0, system: 50, idle: 800, iowait: 20, irq: 5, softirq: 10, steal: 15 },
    perCpu: [
      { cpu: 0, times: { user: 50, nice: 0, system: 25, idle: 400, iowait: 10, irq: 5, softirq: 0, steal: 0 } },
      { cpu: 1, times: { user: 50, nice: 0, system: 25, idle: 400, iowait: 10, irq: 0, softirq: 10, steal: 15 } },
    ],
  },
  process: { pid: 7, comm: "anyperf", state: "R", utime: 10, stime: 5, numThreads: 3 },
  mhz: [2000, 3000],
  nics: { eth0: nic(1000, 10, 500, 5), gone0: nic(1, 1, 1, 1), veth0: nic(5000, 50, 0, 0) },
  snmp: { Tcp: { RetransSegs: 5, InSegs: 100, OutSegs: 200 }, Udp: { InDatagrams: 1 } },
  netstat: { TcpExt: { TCPLostRetransmit: 1, TCPSynRetrans: 2, TCPFastRetrans: 3 } },
  interrupts: {
    cpus: 2,
    lines: [
      { id: "24", count: 10, description: "IO-APIC 5-edge ACPI:Ged" },
      { id: "LOC", count: 100, description: "Local timer interrupts" },
      { id: "ERR", count: 0, description: "" },
    ],
  },
};

const b: HostSample = {
  monotonicMs: 3000,
  wallMs: 2000,
  cpu: {
    total: { user: 400, nice: 0, system: 150, idle: 1100, iowait: 60, irq: 15, softirq: 40, steal: 35 },
    perCpu: [
      { cpu: 0, times: { user: 250, nice: 0, system: 75, idle: 500, iowait: 50, irq: 15, softirq: 0, steal: 0 } },
      { cpu: 1, times: { user: 150, nice: 0, system: 75, idle: 600, iowait: 10, irq: 0, softirq: 40, steal: 35 } },
    ],
  },
  process: { pid: 7, comm: "anyperf", state: "R", utime: 130, stime: 45, numThreads: 3 },
  mhz: [2200, 2800],
  nics: { eth0: nic(201000, 210, 10500, 105), new0: nic(9, 9, 9, 9), veth0: nic(100, 1, 0, 0) },
  snmp: { Tcp: { RetransSegs: 12, InSegs: 1100, OutSegs: 2200, AttemptFails: 4 } },
  netstat: { TcpExt: { TCPLostRetransmit: 3, TCPSynRetrans: 2, TCPFastRetrans: 9 } },
  interrupts: {
    cpus: 2,
    lines: [
      { id: "24", count: 15, description: "IO-APIC 5-edge ACPI:Ged" },
      { id: "LOC", count: 300, description: "Local timer interrupts" },
      { id: "ERR", count: 0, description: "" },
      { id: "99", count: 7, description: "hot-added" },
    ],
  },
};

describe("hostWindow", () => {
  const w = hostWindow(a, b);

  test("CPU % per mode over all CPUs (deltas / 800 jiffies)", () => {
    expect(w.seconds).toBe(2);
    expect(w.cores).toBe(2);
    expect(w.cpu).toEqual({ user: 37.5, nice: 0, system: 12.5, idle: 37.5, iowait: 5, irq: 1.25, softirq: 3.75, steal: 2.5, busy: 57.5 });
  });

  test("CPU % per CPU (deltas / 400 jiffies each)", () => {
    expect(w.perCpu).toEqual([
      { cpu: 0, user: 50, nice: 0, system: 12.5, idle: 25, iowait: 10, irq: 2.5, softirq: 0, steal: 0, busy: 65 },
      { cpu: 1, user: 25, nice: 0, system: 12.5, idle: 50, iowait: 0, irq: 0, softirq: 7.5, steal: 5, busy: 50 },
    ]);
  });

  test("process CPU: 120 user + 40 system ticks at 100 Hz over 2 s = 60% + 20% of one core", () => {
    expect(w.process).toEqual({ total: 80, user: 60, system: 20 });
  });

  test("MHz mean of both samples; first CPU's MHz at the end; cycles/byte inputs with ntttcp's busy fraction", () => {
    expect(w.mhz).toBe(2500);
    expect(w.mhzFirst).toBe(2200);
    expect(w.cycles).toEqual({ mhz: 2500, busyFraction: 0.625, cores: 2, seconds: 2 });
  });

  test("NIC deltas and rates; interfaces in only one sample dropped; a counter that went back is absent", () => {
    expect(Object.keys(w.nics ?? {})).toEqual(["eth0", "veth0"]);
    expect(w.nics?.eth0).toEqual({
      rxBytes: 200000, rxPackets: 200, rxErrs: 0, rxDrop: 0, txBytes: 10000, txPackets: 100, txErrs: 0, txDrop: 0,
      rxBytesPerSecond: 100000, rxPacketsPerSecond: 100, txBytesPerSecond: 5000, txPacketsPerSecond: 50,
    });
    expect(w.nics?.veth0?.rxBytes).toBeUndefined();
    expect(w.nics?.veth0?.rxBytesPerSecond).toBeUndefined();
    expect(w.nics?.veth0?.txBytes).toBe(0);
  });

  test("TCP, TcpExt and UDP counters: missing in a sample means absent, never 0", () => {
    expect(w.tcp).toEqual({ retransSegs: 7, inSegs: 1000, outSegs: 2000 });
    expect(w.tcpExt).toEqual({ lostRetransmit: 2, synRetrans: 0, fastRetrans: 6 });
    expect("udp" in w).toBe(false);
  });

  test("interrupts: total and rate over lines in both samples; only lines that moved are listed", () => {
    expect(w.interrupts).toEqual({
      total: 205,
      perSecond: 102.5,
      lines: [
        { id: "24", description: "IO-APIC 5-edge ACPI:Ged", count: 5 },
        { id: "LOC", description: "Local timer interrupts", count: 200 },
      ],
    });
  });

  test("softirqs (the layout of /proc/interrupts): the same window, ntttcp's Windows DPCs", () => {
    const at = (net: number, timer: number): HostSample["softirqs"] => ({ cpus: 2, lines: [{ id: "NET_RX", count: net, description: "" }, { id: "TIMER", count: timer, description: "" }] });
    const s = hostWindow({ ...a, softirqs: at(1000, 50) }, { ...b, softirqs: at(1400, 250) });
    expect([s.softirqs?.total, s.softirqs?.perSecond]).toEqual([600, 300]);
    expect(s.softirqs?.lines.map((l) => `${l.id} ${l.count}`)).toEqual(["NET_RX 400", "TIMER 200"]);
    expect(w.softirqs).toBeUndefined();
  });

  test("the window is valid against its own schema and survives JSON", () => {
    expect(HostWindow.parse(JSON.parse(JSON.stringify(w)))).toEqual(w);
  });

  test("no time and no ticks: percentages and rates absent, not 0", () => {
    const same = hostWindow(a, a);
    expect(same.seconds).toBe(0);
    expect(same.cpu).toBeUndefined();
    expect(same.perCpu).toBeUndefined();
    expect(same.process).toBeUndefined();
    expect(same.cycles).toBeUndefined();
    expect(same.nics?.eth0?.rxBytesPerSecond).toBeUndefined();
    expect(same.interrupts?.perSecond).toBeUndefined();
  });

  test("CPU count changed: cores, cycles inputs and interrupts absent; aggregate CPU still given", () => {
    const b3: HostSample = {
      ...b,
      cpu: { total: b.cpu!.total, perCpu: [...b.cpu!.perCpu, { cpu: 2, times: { user: 1, idle: 1 } }] },
      interrupts: { cpus: 3, lines: b.interrupts!.lines },
    };
    const w3 = hostWindow(a, b3);
    expect(w3.cores).toBeUndefined();
    expect(w3.cycles).toBeUndefined();
    expect(w3.interrupts).toBeUndefined();
    expect(w3.cpu?.user).toBe(37.5);
    expect(w3.perCpu?.map((c) => c.cpu)).toEqual([0, 1]);
  });

  test("a process sample from another pid is not compared", () => {
    expect(hostWindow(a, { ...b, process: { ...b.process!, pid: 8 } }).process).toBeUndefined();
  });

  test("the cgroup's throttling over the window, its quota at the end; a counter that went back leaves it out", () => {
    const at = (periods: number, throttled: number, us: number, quota?: number) => ({ ...b, cgroupCpu: { periods, throttled, throttled_us: us, ...(quota ? { quota_cores: quota } : {}) } });
    expect(hostWindow(at(354, 152, 13_163_291), at(394, 190, 16_867_921, 0.05)).cgroup).toEqual({ periods: 40, throttled: 38, throttled_us: 3_704_630, quota_cores: 0.05 });
    expect(hostWindow(at(10, 0, 0), at(20, 0, 0)).cgroup).toEqual({ periods: 10, throttled: 0, throttled_us: 0 });
    expect(hostWindow(at(10, 5, 9), at(2, 1, 1)).cgroup).toBeUndefined();
    expect(hostWindow(a, at(2, 1, 1)).cgroup).toBeUndefined();
  });

  test("empty samples (nothing readable) give only seconds", () => {
    expect(hostWindow({ monotonicMs: 0, wallMs: 0 }, { monotonicMs: 500, wallMs: 0 })).toEqual({ seconds: 0.5 });
  });
});
