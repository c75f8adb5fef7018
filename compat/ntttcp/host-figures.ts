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
  // 1.4.3 reads a counter the kernel no longer has (TCPForwardRetrans is gone from newer kernels' TcpExt) as 0, and so
  // do we once both tables were read: one missing name must not turn every rate into n/a.
  const perSec = (v: number | undefined) => rate(v ?? 0)!;
  const retransRates =
    tcp && ext && s > 0
      ? {
          retransSegsPerSec: perSec(tcp.retransSegs),
          lostRetransPerSec: perSec(ext.lostRetransmit),
          synRetransPerSec: perSec(ext.synRetrans),
          fastRetransPerSec: perSec(ext.fastRetrans),
          forwardRetransPerSec: perSec(ext.forwardRetrans),
          slowStartRetransPerSec: perSec(ext.slowStartRetrans),
          retransFailPerSec: perSec(ext.retransFail),
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
    dpcs: w.softirqs?.total,
  };
}
