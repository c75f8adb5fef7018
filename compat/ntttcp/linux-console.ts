import { linuxFigures, linuxThroughput } from "./figures.ts";
import type { ParseMessage } from "./linux-options.ts";
import type { NtttcpPlan } from "./plan.ts";
import type { NtttcpResults } from "./results.ts";

/**
 * ntttcp-for-linux console text (docs/protocols/ntttcp-linux.md §8): `HH:MM:SS LEVEL: text` log lines, the verbose flag
 * dump, and the results block. Pure: the caller supplies the clock and writes the lines.
 */

export const LINUX_DASHES = "-".repeat(57);
export const NA = "n/a";

export function linuxBanner(): string[] {
  return ["NTTTCP for Linux 1.4.3 (anyperf)", LINUX_DASHES];
}

const pad2 = (n: number) => String(n).padStart(2, "0");

export function linuxLogLine(at: Date, level: ParseMessage["level"], text: string): string {
  const lv = level === "INFO" ? "INFO" : level === "ERR" ? "ERR " : "DBG ";
  return `${pad2(at.getHours())}:${pad2(at.getMinutes())}:${pad2(at.getSeconds())} ${lv}: ${text}`;
}

/** The -V flag dump, in print_flags() order with its tab layout. */
export function linuxFlagDump(p: NtttcpPlan, o: { sourceAddress: string; cpuAffinity: number | null; threadsPerPort: number; connsPerThread: number; multiClient: boolean; lastClient: boolean; showTcpRetrans: boolean; bandwidthBits: number; fqRateBits: number }): string[] {
  const out: string[] = [];
  const sender = p.role === "sender";
  out.push(sender ? "*** sender role" : "*** receiver role");
  if (!sender && p.hold) out.push("*** hold receiver always running");
  if (o.multiClient) out.push("multiple clients:\t\t yes");
  if (o.lastClient) out.push("last client:\t\t\t yes");
  if (p.sync.kind === "none") out.push("*** no sender/receiver synch");
  if (sender) out.push(`connections:\t\t\t ${p.ports.length} X ${o.threadsPerPort} X ${o.connsPerThread}`);
  else out.push(`ports:\t\t\t\t ${p.ports.length}`);
  out.push(`cpu affinity:\t\t\t ${o.cpuAffinity === null ? "*" : o.cpuAffinity}`);
  out.push(`server address:\t\t\t ${p.threads[0]!.host}`);
  if (sender) out.push(`client address:\t\t\t ${o.sourceAddress}`);
  out.push(`domain:\t\t\t\t ${p.family === "ipv6" ? "IPv6" : "IPv4"}`);
  out.push(`protocol:\t\t\t ${p.protocol === "udp" ? "UDP" : "TCP"}`);
  out.push(`server port starting at:\t ${p.basePort}`);
  if (sender && p.sourcePort > 0) out.push(`client source port starting at:\t ${p.sourcePort}`);
  if (!sender) out.push(`receiver socket buffer (bytes):\t ${p.readSize}`);
  if (sender) out.push(`sender socket buffer (bytes):\t ${p.writeSize}`);
  if (sender && o.bandwidthBits) out.push(`bandwidth limit (bits/sec):\t ${o.bandwidthBits}`);
  if (sender && o.fqRateBits) out.push(`fq rate limit (bits/sec):\t ${o.fqRateBits}`);
  out.push(`tcp nodelay:\t ${p.noDelay ? "yes" : "no"}`);
  out.push(`test warm-up (sec):\t\t ${p.warmup === 0 ? "no" : p.warmup}`);
  out.push(`test duration (sec):\t\t ${p.duration === 0 ? "continuous" : p.duration}`);
  out.push(`test cool-down (sec):\t\t ${p.cooldown === 0 ? "no" : p.cooldown}`);
  out.push(`show system tcp retransmit:\t ${o.showTcpRetrans ? "yes" : "no"}`);
  if (p.outputs.log) out.push(`capture console output to::\t ${p.outputs.log}`);
  if (p.outputs.xml) out.push(`save output to xml file::\t ${p.outputs.xml.path}`);
  if (p.outputs.json) out.push(`save output to json file::\t ${p.outputs.json}`);
  out.push(`quiet mode:\t\t\t ${p.outputs.quiet ? "enabled" : "disabled"}`);
  out.push(`verbose mode:\t\t\t ${p.outputs.verbose ? "enabled" : "disabled"}`);
  out.push(LINUX_DASHES);
  return out;
}

const f2 = (v: number | undefined) => (v === undefined ? NA : v.toFixed(2));
const f3 = (v: number | undefined) => (v === undefined ? NA : v.toFixed(3));
const int = (v: number | undefined) => (v === undefined ? NA : String(Math.round(v)));

export interface LinuxResultOptions {
  verbose: boolean;
  showTcpRetrans: boolean;
  showNicPackets: boolean;
  showDevInterrupts: boolean;
}

/** The results block as log messages (the caller stamps them), followed by the dash line. */
export function linuxResultMessages(r: NtttcpResults, o: LinuxResultOptions): ParseMessage[] {
  const m: ParseMessage[] = [];
  const info = (text: string) => m.push({ level: "INFO", text });
  const fig = linuxFigures(r);
  const h = r.host;
  if (o.verbose) {
    info("\tThread\tTime(s)\tThroughput");
    info("\t======\t=======\t==========");
    for (const t of r.threads) info(`\t${t.index}\t ${t.seconds.toFixed(2)}\t ${linuxThroughput(t.bytes, t.seconds)}`);
  }
  if (r.role === "sender") info(`${r.connections} connections tested`);
  info("#####  Totals:  #####");
  info(`test duration\t:${r.seconds.toFixed(2)} seconds`);
  info(`total bytes\t:${r.totalBytes}`);
  info(`\t throughput\t:${linuxThroughput(r.totalBytes, r.seconds)}`);
  if (r.protocol === "tcp") info(`\t retrans segs\t:${int(h.retransSegs)}`);
  if (o.showTcpRetrans) {
    const x = h.tcpRetrans;
    info("tcp retransmit:");
    info(`\t retrans_segments/sec\t:${f2(x?.retransSegsPerSec)}`);
    info(`\t lost_retrans/sec\t:${f2(x?.lostRetransPerSec)}`);
    info(`\t syn_retrans/sec\t:${f2(x?.synRetransPerSec)}`);
    info(`\t fast_retrans/sec\t:${f2(x?.fastRetransPerSec)}`);
    info(`\t forward_retrans/sec\t:${f2(x?.forwardRetransPerSec)}`);
    info(`\t slowStart_retrans/sec\t:${f2(x?.slowStartRetransPerSec)}`);
    info(`\t retrans_fail/sec\t:${f2(x?.retransFailPerSec)}`);
  }
  if (o.showNicPackets) {
    info("total packets:");
    info(`\t tx_packets\t:${int(h.nicTxPackets)}`);
    info(`\t rx_packets\t:${int(h.nicRxPackets)}`);
  }
  if (o.showDevInterrupts) {
    info("interrupts:");
    info(`\t total\t\t:${int(h.interrupts)}`);
    info(`\t interrupts/sec\t:${f3(fig.interruptsPerSec)}`);
  }
  if (o.showNicPackets && o.showDevInterrupts) info(`\t pkts/interrupt\t:${f2(fig.packetsPerInterrupt)}`);
  info(`cpu cores\t:${int(h.cpuCores)}`);
  info(`\t cpu speed\t:${h.cpuMHz === undefined ? NA : `${h.cpuMHz.toFixed(3)}MHz`}`);
  const pct = (v: number | undefined) => (v === undefined ? NA : `${v.toFixed(2)}%`);
  info(`\t user\t\t:${pct(h.userPct)}`);
  info(`\t system\t\t:${pct(h.systemPct)}`);
  info(`\t idle\t\t:${pct(h.idlePct)}`);
  info(`\t iowait\t\t:${pct(h.iowaitPct)}`);
  info(`\t softirq\t:${pct(h.softirqPct)}`);
  info(`\t cycles/byte\t:${f2(fig.cyclesPerByte)}`);
  info(`cpu busy (all)\t:${pct(h.processCpuPct)}`);
  if (o.verbose && r.role === "sender" && r.protocol === "tcp") info(`tcpi rtt\t\t:${h.tcpRttUs === undefined ? NA : `${Math.round(h.tcpRttUs)} us`}`);
  return m;
}

/** "Real-time throughput" line: overwrite in place on a terminal, one line per sample otherwise. */
export function linuxRealtimeLine(bytes: number, seconds: number, tty: boolean): string {
  const text = `Real-time throughput: ${linuxThroughput(bytes, seconds)}`;
  return tty ? `\x1b[2K${text}\r` : `${text}\n`;
}
