import type { HostWindow } from "../../src/host/window.ts";
import type { HostFigures } from "./results.ts";

/**
 * The host window of the measured phase → the figures ntttcp prints. Absent counters stay absent (n/a).
 * NIC packets and interrupts are only reported when the user named an interface / device, as in ntttcp-for-linux;
 * the Windows dialect always reports interrupts.
 */
export function hostFigures(
  w: HostWindow | undefined,
  o: { protocol: "tcp" | "udp"; nic?: string; interruptsMatching?: string; allInterrupts?: boolean },
): HostFigures {
  if (!w) return {};
  const s = w.seconds;
  const rate = (v: number | undefined) => (v === undefined || s <= 0 ? undefined : v / s);
  const tcp = w.tcp;
  const ext = w.tcpExt;
  const udp = w.udp;
  const nic = o.nic ? w.nics?.[o.nic] : undefined;
  let interrupts: number | undefined;
  if (w.interrupts) {
    if (o.interruptsMatching) interrupts = w.interrupts.lines.filter((l) => l.description.includes(o.interruptsMatching!)).reduce((n, l) => n + l.count, 0);
    else if (o.allInterrupts) interrupts = w.interrupts.total;
  }
  const retransRates =
    tcp && ext && [tcp.retransSegs, ext.lostRetransmit, ext.synRetrans, ext.fastRetrans, ext.forwardRetrans, ext.slowStartRetrans, ext.retransFail].every((v) => v !== undefined) && s > 0
      ? {
          retransSegsPerSec: rate(tcp.retransSegs)!,
          lostRetransPerSec: rate(ext.lostRetransmit)!,
          synRetransPerSec: rate(ext.synRetrans)!,
          fastRetransPerSec: rate(ext.fastRetrans)!,
          forwardRetransPerSec: rate(ext.forwardRetrans)!,
          slowStartRetransPerSec: rate(ext.slowStartRetrans)!,
          retransFailPerSec: rate(ext.retransFail)!,
        }
      : undefined;
  return {
    cpuCores: w.cores,
    cpuMHz: w.mhzFirst,
    userPct: w.cpu?.user,
    systemPct: w.cpu?.system,
    idlePct: w.cpu?.idle,
    iowaitPct: w.cpu?.iowait,
    softirqPct: w.cpu?.softirq,
    processCpuPct: w.process?.total,
    retransSegs: tcp?.retransSegs,
    segmentsOut: o.protocol === "udp" ? udp?.outDatagrams : tcp?.outSegs,
    segmentsIn: o.protocol === "udp" ? udp?.inDatagrams : tcp?.inSegs,
    errors: o.protocol === "udp" ? udp?.inErrors : tcp?.attemptFails,
    tcpRetrans: retransRates,
    nicTxPackets: nic?.txPackets,
    nicRxPackets: nic?.rxPackets,
    interrupts,
  };
}
