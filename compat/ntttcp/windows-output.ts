import { windowsFigures } from "./figures.ts";
import { NA } from "./linux-console.ts";
import type { NtttcpPlan } from "./plan.ts";
import type { NtttcpResults } from "./results.ts";
import type { WindowsOptions } from "./windows-options.ts";
import { buildXml, el } from "./xml-tree.ts";

/**
 * NTttcp for Windows 5.40 console tables and -xml file (docs/protocols/ntttcp-windows.md §6, §7). MB and KB are
 * 1024-based. One deliberate difference: the per-thread Time(s) and KB/s columns show the thread's real figures, where
 * 5.40 prints 0.000 because of a known bug (its XML already divides by the test time).
 */

const num = (v: number | undefined, w: number, dp: number) => (v === undefined ? NA : v.toFixed(dp)).padStart(w);
const uint = (v: number | undefined, w: number) => (v === undefined ? NA : String(Math.round(v))).padStart(w);

export const WINDOWS_BANNER = "Copyright Version 5.40 (anyperf)";

/** 5.40 writes its console and its -xml file in text mode: every line ends in CRLF. */
export const windowsLines = (text: string): string => text.replace(/\r?\n/g, "\r\n");

/** GetComputerName's answer: the NetBIOS name, upper case, at most 15 characters, without the DNS domain. */
export const windowsComputerName = (host: string): string => host.split(".")[0]!.toUpperCase().slice(0, 15);

/** Everything printed after "Network activity progressing...". */
export function windowsConsole(p: NtttcpPlan, r: NtttcpResults): string {
  const f = windowsFigures(r, p.writeSize);
  const h = r.host;
  const lines: string[] = ["", ""];
  if (!p.outputs.hidePerThread) {
    lines.push("Thread  Time(s) Throughput(KB/s) Avg B / Compl", "======  ======= ================ =============");
    for (const t of r.threads) {
      const x = f.thread(t.bytes, t.seconds, t.ios);
      lines.push(`${uint(t.index, 6)} ${num(t.seconds, 8, 3)} ${num(x.KBps, 16, 3)} ${num(x.avgBytesPerCompl, 13, 3)}`);
    }
    lines.push("", "");
  }
  lines.push("#####  Totals:  #####", "", "");
  lines.push("   Bytes(MEG)    realtime(s) Avg Frame Size Throughput(MB/s)", "================ =========== ============== ================");
  lines.push(`${num(f.totalMB, 16, 6)} ${num(r.seconds, 11, 3)} ${num(f.avgFrameSize, 14, 3)} ${num(f.MBps, 16, 3)}`, "", "");
  lines.push("Throughput(Buffers/s) Cycles/Byte       Buffers", "===================== =========== =============");
  lines.push(`${num(f.buffersPerSec, 21, 3)} ${num(f.cyclesPerByte, 11, 3)} ${num(f.buffers, 13, 3)}`, "", "");
  lines.push("DPCs(count/s) Pkts(num/DPC)   Intr(count/s) Pkts(num/intr)", "============= ============= =============== ==============");
  // Linux has no DPCs; its deferred work is the softirqs (/proc/softirqs), counted in their place.
  lines.push(`${num(f.dpcsPerSec, 13, 3)} ${num(f.packetsPerDpc, 13, 3)}   ${num(f.interruptsPerSec, 13, 3)}  ${num(f.packetsPerInterrupt, 13, 3)}`, "", "");
  lines.push("Packets Sent Packets Received Retransmits Errors Avg. CPU %", "============ ================ =========== ====== ==========");
  lines.push(`${uint(h.segmentsOut, 12)} ${uint(h.segmentsIn, 16)} ${uint(r.protocol === "udp" ? 0 : h.retransSegs, 11)} ${uint(h.errors, 6)} ${num(f.avgCpu, 10, 3)}`);
  if (f.avgCpu !== undefined && f.avgCpu <= 0) lines.push("", "NOTE::Avg CPU% drops below 0% if test duration is too short", "");
  return `${lines.join("\n")}\n`;
}

const tf = (b: boolean) => (b ? "True" : "False");
const fx = (v: number | undefined, dp: number) => (v === undefined ? NA : v.toFixed(dp));
const int = (v: number | undefined) => (v === undefined ? NA : String(Math.round(v)));

/** One <ntttcps|ntttcpr> element as 5.40 appends it to the -xml file. */
export function windowsXml(p: NtttcpPlan, o: WindowsOptions, r: NtttcpResults): string {
  const f = windowsFigures(r, p.writeSize);
  const h = r.host;
  const ms = (s: number) => String(Math.round(s * 1000));
  const params = [
    el("send_socket_buff", String(o.sendBuffer)),
    el("recv_socket_buff", String(o.recvBuffer)),
    // The port counter after thread setup: base + T without -sp.
    el("port", String(o.basePort + p.threads.length)),
    el("sync_port", tf(o.syncPorts)),
    el("no_sync", tf(o.noSync)),
    el("wait_timeout_milliseconds", o.timeoutMs === 0 ? "-1" : String(o.timeoutMs)),
    el("async", tf(o.asyncBuffers !== null)),
    el("verbose", tf(o.verbose)),
    el("wsa", "False"),
    el("use_ipv6", tf(o.ipv6)),
    el("udp", tf(o.udp)),
    el("udp_unconnected", "False"),
    el("verify_data", tf(o.verify)),
    el("wait_all", "False"),
    el("run_time", ms(o.runTime ?? 0)),
    el("warmup_time", ms(o.warmup)),
    el("cooldown_time", ms(o.cooldown)),
    el("dash_n_timeout", String(o.countTimeoutMs)),
    el("bind_sender", tf(o.nic !== undefined)),
    el("sender_name", o.nic ?? ""),
    el("max_active_threads", String(o.maxActiveThreads)),
    el("udp_uso_size", "0"),
    el("udp_receive_coalescing", "0"),
    el("tp", "False"),
    el("use_hvsocket_flag", "False"),
    el("no_stdio_buffer", "False"),
    el("throughput_Bpms", String(Math.floor((o.throttleKBps * 1024) / 1000))),
    el("cpu_burn", "0"),
    el("latency_measurement", "False"),
    el("use_io_compl_ports", "False"),
    el("cpu_from_idle_flag", "False"),
    el("get_estats", "False"),
    el("qos_flag", "False"),
    el("jitter_measurement", "False"),
    el("packet_spacing", "0"),
  ];
  const kids = [el("parameters", params)];
  if (!p.outputs.hidePerThread) {
    for (const t of r.threads) {
      // In 5.40's XML a thread's throughput is divided by the test time t, not by the thread's own time.
      const x = f.thread(t.bytes, r.seconds, t.ios);
      kids.push(
        el(
          "thread",
          [
            el("realtime", t.seconds.toFixed(3), { metric: "s" }),
            el("throughput", x.KBps.toFixed(3), { metric: "KB/s" }),
            el("throughput", x.MBps.toFixed(3), { metric: "MB/s" }),
            el("throughput", x.mbps.toFixed(3), { metric: "mbps" }),
            el("throughput", x.Bps.toFixed(1), { metric: "Bps" }),
            el("avg_bytes_per_compl", fx(x.avgBytesPerCompl, 3), { metric: "B" }),
          ],
          { index: String(t.index) },
        ),
      );
    }
  }
  kids.push(
    el("total_bytes", f.totalMB.toFixed(6), { metric: "MB" }),
    el("realtime", r.seconds.toFixed(6), { metric: "s" }),
    el("avg_bytes_per_compl", fx(f.avgBytesPerCompl, 3), { metric: "B" }),
    el("threads_avg_bytes_per_compl", fx(f.threadsAvgBytesPerCompl, 3), { metric: "B" }),
    el("avg_frame_size", fx(f.avgFrameSize, 3), { metric: "B" }),
    el("throughput", f.MBps.toFixed(3), { metric: "MB/s" }),
    el("throughput", f.mbps.toFixed(3), { metric: "mbps" }),
    el("throughput", f.Bps.toFixed(1), { metric: "Bps" }),
    el("total_buffers", f.buffers.toFixed(3)),
    el("throughput", f.buffersPerSec.toFixed(3), { metric: "buffers/s" }),
    el("avg_packets_per_interrupt", fx(f.packetsPerInterrupt, 3), { metric: "packets/interrupt" }),
    el("interrupts", fx(f.interruptsPerSec, 3), { metric: "count/sec" }),
    el("dpcs", fx(f.dpcsPerSec, 3), { metric: "count/sec" }),
    el("avg_packets_per_dpc", fx(f.packetsPerDpc, 3), { metric: "packets/dpc" }),
    el("cycles", fx(f.cyclesPerByte, 3), { metric: "cycles/byte" }),
    el("packets_sent", int(h.segmentsOut)),
    el("packets_received", int(h.segmentsIn)),
    el("packets_retransmitted", r.protocol === "udp" ? "0" : int(h.retransSegs)),
    el("errors", int(h.errors)),
    el("cpu", fx(f.avgCpu, 3), { metric: "%" }),
    el("num_processors", int(h.cpuCores)),
    el("bufferCount", o.buffers === null ? "9223372036854775807" : String(o.buffers)),
    el("bufferLen", String(o.bufferLen)),
    el("io", String(o.asyncBuffers ?? 2)),
  );
  return windowsLines(buildXml(el(r.role === "sender" ? "ntttcps" : "ntttcpr", kids, { computername: r.computerName, version: "5.40" })));
}

/**
 * 5.40's -v dump of its flags, printed after the banner (docs/protocols/ntttcp-windows.md §1.2 -v): one `name: value`
 * line per field of its flags structure, booleans as 0/1, times in ms, then each mapping's thread count.
 */
export function windowsFlagDump(p: NtttcpPlan, o: WindowsOptions): string[] {
  const b = (v: boolean) => (v ? "1" : "0");
  const ms = (s: number) => String(Math.round(s * 1000));
  return [
    `buffers_length: ${o.bufferLen}`,
    `num_buffers_to_send: ${o.buffers ?? "9223372036854775807"}`,
    `send_socket_buff: ${o.sendBuffer}`,
    `recv_socket_buff: ${o.recvBuffer}`,
    `port: ${o.basePort}`,
    `sync_port: ${b(o.syncPorts)}`,
    `no_sync: ${b(o.noSync)}`,
    `wait_timeout_milliseconds: ${o.timeoutMs === 0 ? -1 : o.timeoutMs}`,
    `async_flag: ${b(o.asyncBuffers !== null)}`,
    `verbose_flag: ${b(o.verbose)}`,
    "wsa_flag: 0",
    `use_ipv6_flag: ${b(o.ipv6)}`,
    `send_flag: ${b(p.role === "sender")}`,
    `udp_flag: ${b(o.udp)}`,
    "udp_unconnected_flag: 0",
    `verify_data_flag: ${b(o.verify)}`,
    "wait_all_flag: 0",
    `run_time: ${ms(o.runTime ?? 0)}`,
    `warmup_time: ${ms(o.warmup)}`,
    `cooldown_time: ${ms(o.cooldown)}`,
    `dash_n_timeout: ${o.countTimeoutMs}`,
    `bind_sender_flag: ${b(o.nic !== undefined)}`,
    `sender_name: ${o.nic ?? ""}`,
    `max_active_threads: ${o.maxActiveThreads}`,
    `no_delay: ${b(o.noDelay)}`,
    "node_affinity: -1",
    "udp_uso_size: 0",
    "udp_receive_coalescing: 0",
    "tp_flag: 0",
    "use_hvsocket_flag: 0",
    "no_stdio_buffer: 0",
    `throughput_Bpms: ${Math.floor((o.throttleKBps * 1024) / 1000)}`,
    "cpu_burn: 0",
    "latency_measurement: 0",
    "use_io_compl_ports: 0",
    "cpu_from_idle_flag: 0",
    "get_estats: 0",
    "qos_flag: 0",
    "packet_period: 0",
    "jitter_measurement: 0",
    ...o.mappings.map((m, i) => `mapping[${i}]: ${m.threads}`),
  ];
}

/** 5.40's -v timestamp before each message: local month/day/year hour:minute:second, no zero padding. */
export const windowsTimestamp = (d: Date): string =>
  `${d.getMonth() + 1}/${d.getDate()}/${d.getFullYear()} ${d.getHours()}:${d.getMinutes()}:${d.getSeconds()} `;
