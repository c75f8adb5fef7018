import { linuxFigures } from "./figures.ts";
import { NA } from "./linux-console.ts";
import { linuxParameters } from "./linux-xml.ts";
import type { NtttcpPlan } from "./plan.ts";
import type { NtttcpResults } from "./results.ts";

/**
 * ntttcp-for-linux -j file (docs/protocols/ntttcp-linux.md §11): every value a string, 4-space indentation and `"key" :
 * value` spacing, including the tool's oddities (a stray " bps" after the per-thread MB/s, the key "tcpAverageRtt
 * metric").
 */

type Json = string | Json[] | { [k: string]: Json };

const fx = (v: number | undefined, dp: number) => (v === undefined ? NA : v.toFixed(dp));
const int = (v: number | undefined) => (v === undefined ? NA : String(Math.round(v)));
const metric = (m: string, value: string) => ({ metric: m, value });

export function linuxJsonValue(p: NtttcpPlan, r: NtttcpResults, o: { showTcpRetrans: boolean }): Json {
  const f = linuxFigures(r);
  const h = r.host;
  const body: Record<string, Json> = {
    computername: r.computerName,
    version: "5.33-linux",
    parameters: Object.fromEntries(linuxParameters(p).map(([, name, v]) => [name, v])),
  };
  if (p.outputs.verbose) {
    body.threads = r.threads.map((t) => {
      const x = f.thread(t.bytes, t.seconds);
      return {
        index: String(t.index),
        realTime: metric("s", t.seconds.toFixed(3)),
        throughputs: [metric("KB/s", x.KBps.toFixed(3)), metric("MB/s", `${x.MBps.toFixed(3)} bps`), metric("mbps", x.mbps.toFixed(3))],
        avgBytesPerCompl: metric("B", "0.000"),
      };
    });
  }
  const pktsPerIntr = f.packetsPerInterrupt ?? (h.interrupts === undefined ? undefined : 0);
  Object.assign(body, {
    totalBytes: metric("MB", f.totalMB.toFixed(6)),
    realTime: metric("s", r.seconds.toFixed(6)),
    avgBytesPerCompl: metric("B", "0.000"),
    threadsAvgBytesPerCompl: metric("B", "0.000"),
    avgFrameSize: metric("B", "0.000"),
    throughputs: [metric("MB/s", f.MBps.toFixed(3)), metric("mbps", f.mbps.toFixed(3)), metric("Bps", f.Bps.toFixed(3)), metric("buffer/s", "0.000")],
    totalBuffers: "0.000",
    avgPacketsPerInterrupt: metric("packets/interrupt", fx(pktsPerIntr, 3)),
    interrupt: metric("count/sec", fx(f.interruptsPerSec, 3)),
    interruptTotal: metric("count", int(h.interrupts)),
    dpcs: metric("count/sec", "0.000"),
    avgPacketsPerDpc: metric("packets/dpc", "0.000"),
    cycles: metric("cycles/byte", fx(f.cyclesPerByte, 3)),
    packetsSent: int(h.nicTxPackets),
    packetsReceived: int(h.nicRxPackets),
    packets_retransmitted: int(h.retransSegs),
    errors: "0",
    cpu: metric("%", fx(h.processCpuPct, 3)),
    bufferCount: "0",
    bufferLen: "0",
    io: "0",
  });
  if (o.showTcpRetrans) {
    const x = h.tcpRetrans;
    body.tcp_retransmits = [
      metric("retrans_segs", int(h.retransSegs)),
      metric("retrans_segments_per_sec", fx(x?.retransSegsPerSec, 2)),
      metric("lost_retrans_per_sec", fx(x?.lostRetransPerSec, 2)),
      metric("syn_retrans_per_sec", fx(x?.synRetransPerSec, 2)),
      metric("fast_retrans_per_sec", fx(x?.fastRetransPerSec, 2)),
      metric("forward_retrans_per_sec", fx(x?.forwardRetransPerSec, 2)),
      metric("slowStart_retrans_per_sec", fx(x?.slowStartRetransPerSec, 2)),
      metric("retrans_fail_per_sec", fx(x?.retransFailPerSec, 2)),
    ];
  }
  if (p.outputs.verbose && r.role === "sender" && r.protocol === "tcp") body["tcpAverageRtt metric"] = `${int(h.tcpRttUs)} us`;
  body.os = r.os || "Unknown";
  return { [r.role === "sender" ? "ntttcps" : "ntttcpr"]: body };
}

/** The tool's layout: JSON.stringify's 4-space form with a space before every key's colon. */
export function linuxJson(p: NtttcpPlan, r: NtttcpResults, o: { showTcpRetrans: boolean }): string {
  const text = JSON.stringify(linuxJsonValue(p, r, o), null, 4);
  return `${text.replace(/^(\s*"(?:[^"\\]|\\.)*"): /gm, "$1 : ")}\n`;
}
