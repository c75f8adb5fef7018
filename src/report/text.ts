import { formatBits, formatBytes } from "../units.ts";
import type { Figures, RemoteEnd, Results, SocketBuffers } from "./result.ts";
import { diagnosisLines } from "../diagnosis/text.ts";
import { TARGET_REACHED_PERCENT } from "../diagnosis/thresholds.ts";
import { throughputBps, utilizationPercent } from "../formulas.ts";
import type { HostWindow } from "../host/window.ts";

const pct = (v: number | undefined, d = 1) => (v === undefined ? "n/a" : `${v.toFixed(d)} %`);
/** A latency in µs as the report prints it: µs below a millisecond, ms above. */
export const formatMicroseconds = (v: number) => (v >= 1000 ? `${(v / 1000).toFixed(2)} ms` : `${v.toFixed(1)} µs`);
const us = formatMicroseconds;

/** Bytes, rate and what the test adds (pkt/s and loss, trans/s): the columns of the report and the interval lines. */
export function figuresLine(f: Figures): string {
  const parts = [formatBytes(f.bytes).padStart(11), formatBits(f.throughput_bps).padStart(14)];
  if (f.packets_per_second !== undefined) parts.push(`${Math.round(f.packets_per_second).toLocaleString("en-US")} pkt/s`.padStart(16));
  if (f.lost !== undefined) parts.push(`lost ${f.lost} (${pct(f.loss_percent, 3)})`);
  if (f.transactions_per_second !== undefined) parts.push(`${Math.round(f.transactions_per_second).toLocaleString("en-US")} trans/s`.padStart(18));
  return parts.join("  ");
}

function cpuLine(label: string, c: Results["cpu"], retransmits: number | undefined, transport: Results["transport"]): string {
  const modes = c.host?.cpu;
  return (
    `${label}: host busy ${pct(c.busy_percent)}` +
    (modes ? ` (user ${pct(modes.user)}, system ${pct(modes.system)}, softirq ${pct(modes.softirq)}, iowait ${pct(modes.iowait)})` : "") +
    `, this process ${pct(c.process_percent)}, cycles/byte ${c.cycles_per_byte === undefined ? "n/a" : c.cycles_per_byte.toFixed(2)}` +
    // The test's own sockets only; a UDP test has none, and the host's count of every connection is not its figure.
    (transport === "tcp" ? `, TCP retransmits ${retransmits ?? "n/a"}` : "")
  );
}

/** -w and what getsockopt read back on this end's data sockets (Linux doubles what is set, for its bookkeeping). */
function socketBuffersLine(label: string, b: SocketBuffers): string {
  // Each side only where this end has sockets of it (a sending end has no receiving sockets to read).
  const read = [...(b.send_bytes === undefined ? [] : [`SO_SNDBUF ${formatBytes(b.send_bytes)}`]), ...(b.receive_bytes === undefined ? [] : [`SO_RCVBUF ${formatBytes(b.receive_bytes)}`])];
  return `${label}: -w ${formatBytes(b.requested_bytes)} asked; ${read.length ? `getsockopt gave ${read.join(", ")}` : "not read back (no data socket opened, or no socket options on this platform)"}`;
}

/** One process's many-flows figures (none for a single flow). */
function flowsLines(label: string, f: Results["flows"]): string[] {
  if (!f || f.count <= 1) return [];
  return [`${label}: ${f.count}, memory ${formatBytes(f.memory_per_flow_bytes)} per flow (RSS ${formatBytes(f.rss_before_bytes)} → ${formatBytes(f.rss_with_flows_bytes)}, Workers' start-up included), slowest/fastest flow ${f.slowest_to_fastest.toFixed(2)}`];
}

/** A sender below its -b pace by more than TARGET_REACHED_PERCENT allows: said, not left to be noticed. */
function missedPaceLine(label: string, sent: Figures | undefined, target: number | undefined): string[] {
  if (sent === undefined || target === undefined) return [];
  const share = utilizationPercent(sent.throughput_bps, target);
  if (share >= TARGET_REACHED_PERCENT) return [];
  return [`${label} missed its -b pace: sent ${formatBits(sent.throughput_bps)}, ${share.toFixed(1)} % of ${formatBits(target)}`];
}

/** The server's end over the same window: its streams, its sums and its CPU. */
function remoteLines(r: RemoteEnd, transport: Results["transport"], target: number | undefined): string[] {
  const out = [`remote (${r.role}, ${r.peer ? [r.peer.name, r.peer.version].filter((x) => x !== undefined).join(" ") : `anyperf ${r.version}`}):`];
  for (const s of r.streams) out.push(`[${String(s.id).padStart(3)}] ${s.side.padEnd(6)}  ${figuresLine(s)}`);
  if (r.receiver && r.sender) {
    out.push(`[SUM] recv    ${figuresLine(r.receiver)}`);
    out.push(`[SUM] send    ${figuresLine(r.sender)}`);
  } else {
    const side = r.streams.some((s) => s.side === "recv") ? "recv" : r.streams.some((s) => s.side === "send") ? "send" : "server";
    out.push(`[SUM] ${side.padEnd(6)}  ${r.summary ? figuresLine(r.summary) : "not reported by the peer"}`);
  }
  out.push(...missedPaceLine("remote sender", r.sender, target));
  out.push(...flowsLines("remote flows", r.flows));
  out.push(cpuLine("remote CPU", r.cpu, r.retransmits, transport));
  if (r.socket_buffers) out.push(socketBuffersLine("remote socket buffers", r.socket_buffers));
  for (const e of r.errors) out.push(`remote error: ${e}`);
  return out;
}

/**
 * A run over many servers: a row per server (the figures that lead for it: the receiving end's), its remote end's
 * summary and CPU, or the one line that says why it is missing; the whole run's line follows as [SUM].
 */
function hostsLines(r: Results): string[] {
  if (!r.hosts) return [];
  const at = (h: NonNullable<Results["hosts"]>[number]) => `${h.host.includes(":") ? `[${h.host}]` : h.host}:${h.port}`;
  const width = Math.max(...r.hosts.map((h) => at(h).length));
  const out = [`${"server".padEnd(width)}  ${"bytes".padStart(11)}  ${"throughput".padStart(14)}`];
  for (const h of r.hosts) {
    out.push(`${at(h).padEnd(width)}  ${h.summary ? figuresLine(h.summary) : "no figures"}`);
    const served = h.remote?.peer ? [h.remote.peer.name, h.remote.peer.version].filter(Boolean).join(" ") : `anyperf ${h.remote?.version ?? "?"}`;
    if (h.remote) out.push(`${"".padEnd(width)}  ${cpuLine(`remote (${h.remote.role}, ${served}) CPU`, h.remote.cpu, h.remote.retransmits, r.transport)}`);
    // A stock server counts over its own window, which it cannot cut on this run's instants: its figure stays apart.
    if (h.remote?.peer && h.remote.summary) out.push(`${"".padEnd(width)}  ${h.remote.peer.name}'s own count: ${figuresLine(h.remote.summary)} (its window)`);
    if (h.error) out.push(`${"".padEnd(width)}  failed: ${h.error}`);
  }
  out.push(`${"whole run".padEnd(width)}  ${figuresLine(r.summary)}  (${r.hosts.filter((h) => h.summary).length} of ${r.hosts.length} servers)`);
  return [...out, ...testedHostLines(r.cpu.host)];
}

/**
 * The tested host over the window, as the tuning guides read it from `sar -n DEV` and `mpstat -P ALL`: each interface
 * that moved packets, in and out, and each core's busy and softirq share.
 */
function testedHostLines(h: HostWindow | undefined): string[] {
  if (!h) return [];
  const out: string[] = [];
  const rate = (packets: number | undefined, bytes: number | undefined) => `${Math.round(packets ?? 0).toLocaleString("en-US")} pkt/s ${formatBits(throughputBps(bytes ?? 0, h.seconds))}`;
  for (const [name, n] of Object.entries(h.nics ?? {})) {
    if ((n.rxPackets ?? 0) + (n.txPackets ?? 0) === 0) continue;
    out.push(`this host's ${name}: in ${rate(n.rxPacketsPerSecond, n.rxBytes)}, out ${rate(n.txPacketsPerSecond, n.txBytes)}`);
  }
  if (h.perCpu?.length) out.push(`this host's cores: ${h.perCpu.map((c) => `cpu${c.cpu} ${pct(c.busy)} (softirq ${pct(c.softirq)})`).join(", ")}`);
  return out;
}

/** The human report of a native run. */
export function textReport(r: Results): string {
  const out: string[] = [];
  const kind = r.test === "stream" ? r.transport.toUpperCase() : `${r.transport.toUpperCase()}_${r.test.toUpperCase()}`;
  // A client that only sends shows its senders (the server's receivers follow under "remote").
  const reporting = r.streams.filter((s) => s.side === "recv" || s.side === "client");
  const receivers = reporting.length > 0 ? reporting : r.streams;
  // A client with --bidir sends streams of its own beside those it receives: each is a row (loopback's send streams
  // are the same flows as its receive streams, so it lists the receivers only).
  const rows = r.remote && reporting.some((s) => s.side === "recv") ? [...reporting, ...r.streams.filter((s) => s.side === "send")] : receivers;
  out.push(
    `anyperf ${r.mode}: ${kind}, ${receivers.length} stream${receivers.length === 1 ? "" : "s"}, ${r.summary.seconds.toFixed(2)} s measured` +
      (r.phases.warmup_s || r.phases.cooldown_s ? ` (warm-up ${r.phases.warmup_s} s, cool-down ${r.phases.cooldown_s} s)` : "") +
      (r.interrupted ? " — interrupted, partial results" : ""),
  );
  out.push(`[ ID] side    ${"bytes".padStart(11)}  ${"throughput".padStart(14)}`);
  for (const s of rows) out.push(`[${String(s.id).padStart(3)}] ${s.side.padEnd(6)}  ${figuresLine(s)}`);
  // A sender whose server sent no results (lost mid-test) sums its own sent bytes.
  const sumSide = r.test !== "stream" ? "client" : reporting.length === 0 && r.streams.some((s) => s.side === "send") ? "send" : "recv";
  if (!r.remote || reporting.length > 0) out.push(`[SUM] ${sumSide.padEnd(6)}  ${figuresLine(r.summary)}`);
  if (r.sender) out.push(`[SUM] send    ${figuresLine(r.sender)}`);
  out.push(...missedPaceLine("sender", r.sender, r.target_bps));
  const s = r.summary;
  if (s.jitter_ms !== undefined) out.push(`UDP: jitter ${s.jitter_ms.toFixed(3)} ms, out of order ${s.out_of_order ?? 0}${s.send_errors ? `, send errors ${s.send_errors}` : ""}`);
  if (s.latency_us) {
    const l = s.latency_us;
    out.push(`latency: mean ${us(l.mean)}  p50 ${us(l.p50)}  p90 ${us(l.p90)}  p99 ${us(l.p99)}  p99.9 ${us(l.p999)}  (min ${us(l.min)}, max ${us(l.max)})`);
  }
  out.push(...hostsLines(r));
  out.push(...flowsLines("flows", r.flows));
  out.push(cpuLine("CPU", r.cpu, r.retransmits, r.transport));
  if (r.socket_buffers) out.push(socketBuffersLine("socket buffers", r.socket_buffers));
  if (r.remote) out.push(...remoteLines(r.remote, r.transport, r.target_bps));
  if (r.diagnosis) out.push(...diagnosisLines(r.diagnosis));
  for (const e of r.errors) out.push(`error: ${e}`);
  return out.join("\n");
}
