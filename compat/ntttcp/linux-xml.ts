import { linuxFigures } from "./figures.ts";
import { NA } from "./linux-console.ts";
import type { NtttcpPlan } from "./plan.ts";
import type { NtttcpResults } from "./results.ts";
import { buildXml, el, type XmlNode } from "./xml-tree.ts";

/** ntttcp-for-linux -x file (docs/protocols/ntttcp-linux.md §10): element names, order and precisions of 1.4.3. */

const tf = (b: boolean) => (b ? "True" : "False");
const fx = (v: number | undefined, dp: number) => (v === undefined ? NA : v.toFixed(dp));
const int = (v: number | undefined) => (v === undefined ? NA : String(Math.round(v)));

/** <parameters> shared by the Linux XML and JSON (same values, different names). */
export function linuxParameters(p: NtttcpPlan): [string, string, string][] {
  return [
    ["send_socket_buff", "sendSocketBuff", String(p.writeSize)],
    ["recv_socket_buff", "recvSocketBuff", String(p.readSize)],
    ["port", "port", String(p.basePort)],
    ["sync_port", "syncPort", String(p.basePort - 1)],
    ["no_sync", "noSync", tf(p.sync.kind === "none")],
    ["wait_timeout_milliseconds", "waitTimeoutMilliseconds", "0"],
    ["async", "async", "False"],
    ["verbose", "verbose", tf(p.outputs.verbose)],
    ["wsa", "wsa", "False"],
    ["use_ipv6", "useIpv6", tf(p.family === "ipv6")],
    ["udp", "udp", tf(p.protocol === "udp")],
    ["verify_data", "verifyData", "False"],
    ["wait_all", "waitAll", "False"],
    ["run_time", "runTime", String(p.duration)],
    ["warmup_time", "warmupTime", String(p.warmup)],
    ["cooldown_time", "cooldownTime", String(p.cooldown)],
    ["dash_n_timeout", "dashNTimeout", "0"],
    ["bind_sender", "bindSender", "False"],
    ["sender_name", "senderName", "NA"],
    ["max_active_threads", "maxActiveThreads", "0"],
    ["tp", "tp", "False"],
    ["no_stdio_buffer", "noStdioBuffer", "False"],
    ["throughput_Bpms", "throughputBpms", "0"],
    ["cpu_burn", "cpuBurn", "0"],
    ["latency_measurement", "latencyMeasurement", "False"],
    ["use_io_compl_ports", "useIOComplPorts", "NA"],
    ["cpu_from_idle_flag", "cpuFromIdleFlag", "False"],
    ["get_estats", "getEstats", "False"],
    ["qos_flag", "qosFlag", "False"],
    ["jitter_measurement", "jitterMeasurement", "False"],
    ["packet_spacing", "packetSpacing", "0"],
  ];
}

export function linuxXml(p: NtttcpPlan, r: NtttcpResults, o: { showTcpRetrans: boolean }): string {
  const f = linuxFigures(r);
  const h = r.host;
  const kids: XmlNode[] = [el("parameters", linuxParameters(p).map(([name, , v]) => el(name, v)))];
  if (p.outputs.verbose) {
    for (const t of r.threads) {
      const tf_ = f.thread(t.bytes, t.seconds);
      kids.push(
        el(
          "thread",
          [
            el("realtime", t.seconds.toFixed(3), { metric: "s" }),
            el("throughput", tf_.KBps.toFixed(3), { metric: "KB/s" }),
            el("throughput", tf_.MBps.toFixed(3), { metric: "MB/s" }),
            el("throughput", tf_.mbps.toFixed(3), { metric: "mbps" }),
            el("avg_bytes_per_compl", "0.000", { metric: "B" }),
          ],
          { index: String(t.index) },
        ),
      );
    }
  }
  if (r.role === "sender") kids.push(el("conns_tested", String(r.connections)));
  const pktsPerIntr = f.packetsPerInterrupt ?? (h.interrupts === undefined ? undefined : 0);
  kids.push(
    el("total_bytes", f.totalMB.toFixed(6), { metric: "MB" }),
    el("realtime", r.seconds.toFixed(6), { metric: "s" }),
    el("avg_bytes_per_compl", "0.000", { metric: "B" }),
    el("threads_avg_bytes_per_compl", "0.000", { metric: "B" }),
    el("avg_frame_size", "0.000", { metric: "B" }),
    el("throughput", f.MBps.toFixed(3), { metric: "MB/s" }),
    el("throughput", f.mbps.toFixed(3), { metric: "mbps" }),
    el("throughput", f.Bps.toFixed(3), { metric: "Bps" }),
    el("total_buffers", "0.000"),
    el("throughput", "0.000", { metric: "buffers/s" }),
    el("avg_packets_per_interrupt", fx(pktsPerIntr, 3), { metric: "packets/interrupt" }),
    el("interrupts", fx(f.interruptsPerSec, 3), { metric: "count/sec" }),
    el("total_interrupts", int(h.interrupts), { metric: "count" }),
    el("dpcs", "0.000", { metric: "count/sec" }),
    el("avg_packets_per_dpc", "0.000", { metric: "packets/dpc" }),
    el("packets_sent", int(h.nicTxPackets)),
    el("packets_received", int(h.nicRxPackets)),
    el("packets_retransmitted", int(h.retransSegs)),
    el("errors", "0"),
    el("bufferCount", "0"),
    el("bufferLen", "0"),
  );
  if (o.showTcpRetrans) {
    const x = h.tcpRetrans;
    kids.push(
      el("tcp_retransmits", int(h.retransSegs), { metric: "retrans_segs" }),
      el("tcp_retransmits", fx(x?.retransSegsPerSec, 2), { metric: "retrans_segments_per_sec" }),
      el("tcp_retransmits", fx(x?.lostRetransPerSec, 2), { metric: "lost_retrans_per_sec" }),
      el("tcp_retransmits", fx(x?.synRetransPerSec, 2), { metric: "syn_retrans_per_sec" }),
      el("tcp_retransmits", fx(x?.fastRetransPerSec, 2), { metric: "fast_retrans_per_sec" }),
      el("tcp_retransmits", fx(x?.forwardRetransPerSec, 2), { metric: "forward_retrans_per_sec" }),
      el("tcp_retransmits", fx(x?.slowStartRetransPerSec, 2), { metric: "slowStart_retrans_per_sec" }),
      el("tcp_retransmits", fx(x?.retransFailPerSec, 2), { metric: "retrans_fail_per_sec" }),
    );
  }
  kids.push(
    el("cpu_cores", int(h.cpuCores), { metric: "cpu cores" }),
    el("cpu_speed", fx(h.cpuMHz, 3), { metric: "MHz" }),
    el("user", fx(h.userPct, 2), { metric: "%" }),
    el("system", fx(h.systemPct, 2), { metric: "%" }),
    el("idle", fx(h.idlePct, 2), { metric: "%" }),
    el("iowait", fx(h.iowaitPct, 2), { metric: "%" }),
    el("softirq", fx(h.softirqPct, 2), { metric: "%" }),
    el("cycles_per_byte", fx(f.cyclesPerByte, 2), { metric: "cycles/byte" }),
    el("cpu_busy_all", fx(h.processCpuPct, 2), { metric: "%" }),
    el("io", "0"),
  );
  if (p.outputs.verbose && r.role === "sender" && r.protocol === "tcp") kids.push(el("tcp_average_rtt", int(h.tcpRttUs), { metric: "us" }));
  kids.push(el("os", r.os || "Unknown"));
  return buildXml(el(r.role === "sender" ? "ntttcps" : "ntttcpr", kids, { computername: r.computerName, version: "5.33-linux" }));
}
