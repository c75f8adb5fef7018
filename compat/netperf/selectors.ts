import type { OmniResponse } from "../../interop/netperf/omni-response.ts";
import type { OmniResults } from "../../interop/netperf/omni-results.ts";
import { directionName, testShape, type MigratedTest } from "../../interop/netperf/test-request.ts";
import type { Figures, LocalSockets } from "./figures.ts";

/**
 * netperf 2.7.0's omni output selectors, in its enum order (that order is what `-o ?` lists and `-o all` prints):
 * name, up to four header lines, printf format, and where the value comes from. A value of undefined is netperf's
 * NULL display value (only RESULT_BRAND without -B): an empty CSV field, skipped by keyval, blank in columns.
 */

export interface SelectorContext {
  test: MigratedTest;
  /** -t omni: netperf names its socket type Stream whatever -T says (its -T leaves the type as it was). */
  omni: boolean;
  f: Figures;
  response: OmniResponse;
  results: OmniResults;
  sockets: LocalSockets;
  /** netperf's send_size / recv_size: the client's stream I/O sizes, 0 in RR tests. */
  sendSize: number;
  recvSize: number;
  requestSize: number;
  responseSize: number;
  remoteSocketBuffers: { send: number; recv: number };
  sendWidth: number;
  recvWidth: number;
  localSendCalls: number;
  localRecvCalls: number;
  localAlign: { send: number; recv: number };
  remoteAlign: { send: number; recv: number };
  localOffset: { send: number; recv: number };
  remoteOffset: { send: number; recv: number };
  firstBurst: number;
  confidenceLevel: number;
  confidenceIntervalPct: number;
  iterations: number;
  /** Achieved confidence widths in percent (-i/-I runs); undefined otherwise, printed as -1. */
  confidenceWidthsPct: { result: number; localCpu: number; remoteCpu: number } | undefined;
  localCpuBind: number;
  remoteCpuBind: number;
  localCpuCount: number;
  localNoDelay: boolean;
  /** -C: netperf prints it for both sides, though only its own socket is corked. */
  cork: boolean;
  localSocketPrio: number;
  remoteSocketPrio: number;
  localSocketTos: number;
  remoteSocketTos: number;
  localDataPort: string;
  localDataAddress: string;
  localDataFamily: number;
  remoteDataPort: string;
  remoteDataAddress: string;
  remoteDataFamily: number;
  localTransportRetrans: number;
  transportMss: number;
  localCongestion: string;
  remoteCongestion: string;
  localFillFile: string;
  remoteFillFile: string;
  brand: string | undefined;
  uuid: string;
  commandLine: string;
}

export interface Selector {
  name: string;
  lines: [string, string, string, string];
  format: string;
  value: (c: SelectorContext) => number | string | undefined;
}

const DEPRECATED = "Deprecated";

type Row = [string, string, string, string, string, string, (c: SelectorContext) => number | string | undefined];

const dirStr = (c: SelectorContext) => directionName(c.test);

const cpu = (c: SelectorContext, side: "local" | "remote") => (side === "local" ? c.f.localCpu : c.f.remoteCpu);

const ROWS: Row[] = [
  ["OUTPUT_NONE", " ", "", "", "", "%s", () => " "],
  ["SOCKET_TYPE", "Socket", "Type", "", "", "%s", (c) => (!c.omni && testShape(c.test).protocol === "udp" ? "Datagram" : "Stream")],
  ["PROTOCOL", "Protocol", "", "", "", "%s", (c) => testShape(c.test).protocol.toUpperCase()],
  ["DIRECTION", "Direction", "", "", "", "%s", dirStr],
  ["ELAPSED_TIME", "Elapsed", "Time", "(sec)", "", "%.2f", (c) => c.f.elapsed],
  ["THROUGHPUT", "Throughput", "", "", "", "%.2f", (c) => c.f.thruput],
  ["THROUGHPUT_UNITS", "Throughput", "Units", "", "", "%s/s", (c) => c.f.unitsText],
  ["LSS_SIZE_REQ", "Local", "Send Socket", "Size", "Requested", "%d", (c) => c.sockets.sendRequested],
  ["LSS_SIZE", "Local", "Send Socket", "Size", "Initial", "%d", (c) => c.sockets.send],
  ["LSS_SIZE_END", "Local", "Send Socket", "Size", "Final", "%d", (c) => c.sockets.sendEnd],
  ["LSR_SIZE_REQ", "Local", "Recv Socket", "Size", "Requested", "%d", (c) => c.sockets.recvRequested],
  ["LSR_SIZE", "Local", "Recv Socket", "Size", "Initial", "%d", (c) => c.sockets.recv],
  ["LSR_SIZE_END", "Local", "Recv Socket", "Size", "Final", "%d", (c) => c.sockets.recvEnd],
  ["RSS_SIZE_REQ", "Remote", "Send Socket", "Size", "Requested", "%d", (c) => c.remoteSocketBuffers.send],
  ["RSS_SIZE", "Remote", "Send Socket", "Size", "Initial", "%d", (c) => c.response.sendBufSize],
  ["RSS_SIZE_END", "Remote", "Send Socket", "Size", "Final", "%d", (c) => c.results.sendBufSize],
  ["RSR_SIZE_REQ", "Remote", "Recv Socket", "Size", "Requested", "%d", (c) => c.remoteSocketBuffers.recv],
  ["RSR_SIZE", "Remote", "Recv Socket", "Size", "Initial", "%d", (c) => c.response.recvBufSize],
  ["RSR_SIZE_END", "Remote", "Recv Socket", "Size", "Final", "%d", (c) => c.results.recvBufSize],
  ["LOCAL_SEND_SIZE", "Local", "Send", "Size", "", "%d", (c) => c.sendSize],
  ["LOCAL_RECV_SIZE", "Local", "Recv", "Size", "", "%d", (c) => c.recvSize],
  ["REMOTE_SEND_SIZE", "Remote", "Send", "Size", "", "%d", (c) => c.response.sendSize],
  ["REMOTE_RECV_SIZE", "Remote", "Recv", "Size", "", "%d", (c) => c.response.receiveSize],
  ["REQUEST_SIZE", "Request", "Size", "Bytes", "", "%d", (c) => c.requestSize],
  ["RESPONSE_SIZE", "Response", "Size", "Bytes", "", "%d", (c) => c.responseSize],
  ["LOCAL_CPU_UTIL", "Local", "CPU", "Util", "%", "%.2f", (c) => c.f.localCpuUtil],
  ["LOCAL_CPU_PERCENT_USER", "Local", "CPU", "User", "%", "%.2f", (c) => Math.fround(cpu(c, "local")?.user ?? 0)],
  ["LOCAL_CPU_PERCENT_SYSTEM", "Local", "CPU", "System", "%", "%.2f", (c) => Math.fround(cpu(c, "local")?.system ?? 0)],
  ["LOCAL_CPU_PERCENT_IOWAIT", "Local", "CPU", "I/O", "%", "%.2f", (c) => Math.fround(cpu(c, "local")?.iowait ?? 0)],
  ["LOCAL_CPU_PERCENT_IRQ", "Local", "CPU", "IRQ", "%", "%.2f", (c) => Math.fround(cpu(c, "local")?.irq ?? 0)],
  ["LOCAL_CPU_PERCENT_SWINTR", "Local", "CPU", "swintr", "%", "%.2f", (c) => Math.fround(cpu(c, "local")?.softirq ?? 0)],
  ["LOCAL_CPU_METHOD", "Local", "CPU", "Util", "Method", "%c", (c) => c.f.localCpuMethod],
  ["LOCAL_SD", "Local", "Service", "Demand", "", "%.3f", (c) => c.f.localSd],
  ["REMOTE_CPU_UTIL", "Remote", "CPU", "Util", "%", "%.2f", (c) => c.f.remoteCpuUtil],
  ["REMOTE_CPU_PERCENT_USER", "Remote", "CPU", "User", "%", "%.2f", (c) => c.f.remoteCpu.user],
  ["REMOTE_CPU_PERCENT_SYSTEM", "Remote", "CPU", "System", "%", "%.2f", (c) => c.f.remoteCpu.system],
  ["REMOTE_CPU_PERCENT_IOWAIT", "Remote", "CPU", "I/O", "%", "%.2f", (c) => c.f.remoteCpu.iowait],
  ["REMOTE_CPU_PERCENT_IRQ", "Remote", "CPU", "IRQ", "%", "%.2f", (c) => c.f.remoteCpu.irq],
  ["REMOTE_CPU_PERCENT_SWINTR", "Remote", "CPU", "swintr", "%", "%.2f", (c) => c.f.remoteCpu.softirq],
  ["REMOTE_CPU_METHOD", "Remote", "CPU", "Util", "Method", "%c", (c) => c.f.remoteCpuMethod],
  ["REMOTE_SD", "Remote", "Service", "Demand", "", "%.3f", (c) => c.f.remoteSd],
  ["SD_UNITS", "Service", "Demand", "Units", "", "%s", (c) => c.f.sdUnits],
  ["CONFIDENCE_LEVEL", "Confidence", "Level", "Percent", "", "%d", (c) => c.confidenceLevel],
  ["CONFIDENCE_INTERVAL", "Confidence", "Width", "Target", "", "%f", (c) => c.confidenceIntervalPct],
  ["CONFIDENCE_ITERATION", "Confidence", "Iterations", "Run", "", "%d", (c) => c.iterations],
  ["THROUGHPUT_CONFID", "Throughput", "Confidence", "Width (%)", "", "%.3f", (c) => c.confidenceWidthsPct?.result ?? -1],
  ["LOCAL_CPU_CONFID", "Local", "CPU", "Confidence", "Width (%)", "%.3f", (c) => c.confidenceWidthsPct?.localCpu ?? -1],
  ["REMOTE_CPU_CONFID", "Remote", "CPU", "Confidence", "Width (%)", "%.3f", (c) => c.confidenceWidthsPct?.remoteCpu ?? -1],
  ["TRANSACTION_RATE", "Transaction", "Rate", "Tran/s", "", "%.3f", (c) => c.f.transactionRate],
  ["RT_LATENCY", "Round", "Trip", "Latency", "usec/tran", "%.3f", (c) => c.f.rttLatency],
  ["BURST_SIZE", "Initial", "Burst", "Requests", "", "%d", (c) => c.firstBurst],
  ["LOCAL_TRANSPORT_RETRANS", "Local", "Transport", "Retransmissions", "", "%d", (c) => c.localTransportRetrans],
  ["REMOTE_TRANSPORT_RETRANS", "Remote", "Transport", "Retransmissions", "", "%d", (c) => c.results.transportRetrans],
  ["TRANSPORT_MSS", "Transport", "MSS", "bytes", "", "%d", (c) => c.transportMss],
  ["LOCAL_SEND_THROUGHPUT", "Local", "Send", "Throughput", "", "%.2f", (c) => c.f.localSendThruput],
  ["LOCAL_RECV_THROUGHPUT", "Local", "Recv", "Throughput", "", "%.2f", (c) => c.f.localRecvThruput],
  ["REMOTE_SEND_THROUGHPUT", "Remote", "Send", "Throughput", "", "%.2f", (c) => c.f.remoteSendThruput],
  ["REMOTE_RECV_THROUGHPUT", "Remote", "Recv", "Throughput", "", "%.2f", (c) => c.f.remoteRecvThruput],
  ["LOCAL_CPU_BIND", "Local", "CPU", "Bind", "", "%d", (c) => c.localCpuBind],
  ["LOCAL_CPU_COUNT", "Local", "CPU", "Count", "", "%d", (c) => c.localCpuCount],
  ["LOCAL_CPU_PEAK_UTIL", "Local", "Peak", "Per CPU", "Util %", "%.2f", (c) => Math.fround(cpu(c, "local")?.peakUtil ?? -1)],
  ["LOCAL_CPU_PEAK_ID", "Local", "Peak", "Per CPU", "ID", "%d", (c) => cpu(c, "local")?.peakId ?? -1],
  ["LOCAL_CPU_MODEL", "Local", "CPU", "Model", "", "%s", () => DEPRECATED],
  ["LOCAL_CPU_FREQUENCY", "Local", "CPU", "Frequency", "MHz", "%d", () => 0],
  ["REMOTE_CPU_BIND", "Remote", "CPU", "Bind", "", "%d", (c) => c.remoteCpuBind],
  ["REMOTE_CPU_COUNT", "Remote", "CPU", "Count", "", "%d", (c) => c.results.numCpus],
  ["REMOTE_CPU_PEAK_UTIL", "Remote", "Peak", "Per CPU", "Util %", "%.2f", (c) => c.f.remoteCpu.peakUtil],
  ["REMOTE_CPU_PEAK_ID", "Remote", "Peak", "Per CPU", "ID", "%d", (c) => c.f.remoteCpu.peakId],
  ["REMOTE_CPU_MODEL", "Remote", "CPU", "Model", "", "%s", () => DEPRECATED],
  ["REMOTE_CPU_FREQUENCY", "Remote", "CPU", "Frequency", "MHz", "%d", (c) => c.response.cpuFrequency],
  ["SOURCE_PORT", "Source", "Port", "", "", "%s", (c) => c.localDataPort],
  ["SOURCE_ADDR", "Source", "Address", "", "", "%s", (c) => c.localDataAddress],
  ["SOURCE_FAMILY", "Source", "Family", "", "", "%d", (c) => c.localDataFamily],
  ["DEST_PORT", "Destination", "Port", "", "", "%s", (c) => c.remoteDataPort],
  ["DEST_ADDR", "Destination", "Address", "", "", "%s", (c) => c.remoteDataAddress],
  ["DEST_FAMILY", "Destination", "Family", "", "", "%d", (c) => c.remoteDataFamily],
  ["LOCAL_SEND_CALLS", "Local", "Send", "Calls", "", "%d", (c) => c.localSendCalls],
  ["LOCAL_RECV_CALLS", "Local", "Recv", "Calls", "", "%d", (c) => c.localRecvCalls],
  ["LOCAL_BYTES_PER_RECV", "Local", "Bytes", "Per", "Recv", "%.2f", (c) => c.f.bytesPerRecv],
  ["LOCAL_BYTES_PER_SEND", "Local", "Bytes", "Per", "Send", "%.2f", (c) => c.f.bytesPerSend],
  ["LOCAL_BYTES_SENT", "Local", "Bytes", "Sent", "", "%d", (c) => c.f.bytesSent],
  ["LOCAL_BYTES_RECVD", "Local", "Bytes", "Received", "", "%d", (c) => c.f.bytesReceived],
  ["LOCAL_BYTES_XFERD", "Local", "Bytes", "Xferred", "", "%.0f", (c) => c.f.bytesXferd],
  ["LOCAL_SEND_OFFSET", "Local", "Send", "Offset", "", "%d", (c) => c.localOffset.send],
  ["LOCAL_RECV_OFFSET", "Local", "Recv", "Offset", "", "%d", (c) => c.localOffset.recv],
  ["LOCAL_SEND_ALIGN", "Local", "Send", "Alignment", "", "%d", (c) => c.localAlign.send],
  ["LOCAL_RECV_ALIGN", "Local", "Recv", "Alignment", "", "%d", (c) => c.localAlign.recv],
  ["LOCAL_SEND_WIDTH", "Local", "Send", "Width", "", "%d", (c) => c.sendWidth],
  ["LOCAL_RECV_WIDTH", "Local", "Recv", "Width", "", "%d", (c) => c.recvWidth],
  ["LOCAL_SEND_DIRTY_COUNT", "Local", "Send", "Dirty", "Count", "%d", () => -1],
  ["LOCAL_RECV_DIRTY_COUNT", "Local", "Recv", "Dirty", "Count", "%d", () => -1],
  ["LOCAL_RECV_CLEAN_COUNT", "Local", "Recv", "Clean", "Count", "%d", () => -1],
  ["LOCAL_NODELAY", "Local", "NODELAY", "", "", "%d", (c) => (c.localNoDelay ? 1 : 0)],
  ["LOCAL_CORK", "Local", "Cork", "", "", "%d", (c) => (c.cork ? 1 : 0)],
  ["REMOTE_SEND_CALLS", "Remote", "Send", "Calls", "", "%d", (c) => c.results.sendCalls],
  ["REMOTE_RECV_CALLS", "Remote", "Recv", "Calls", "", "%d", (c) => c.results.recvCalls],
  ["REMOTE_BYTES_PER_RECV", "Remote", "Bytes", "Per", "Recv", "%.2f", (c) => c.f.remoteBytesPerRecv],
  ["REMOTE_BYTES_PER_SEND", "Remote", "Bytes", "Per", "Send", "%.2f", (c) => c.f.remoteBytesPerSend],
  ["REMOTE_BYTES_SENT", "Remote", "Bytes", "Sent", "", "%d", (c) => c.f.remoteBytesSent],
  ["REMOTE_BYTES_RECVD", "Remote", "Bytes", "Received", "", "%d", (c) => c.f.remoteBytesReceived],
  ["REMOTE_BYTES_XFERD", "Remote", "Bytes", "Xferred", "", "%.0f", (c) => c.f.remoteBytesXferd],
  ["REMOTE_SEND_OFFSET", "Remote", "Send", "Offset", "", "%d", (c) => c.remoteOffset.send],
  ["REMOTE_RECV_OFFSET", "Remote", "Recv", "Offset", "", "%d", (c) => c.remoteOffset.recv],
  ["REMOTE_SEND_ALIGN", "Remote", "Send", "Alignment", "", "%d", (c) => c.remoteAlign.send],
  ["REMOTE_RECV_ALIGN", "Remote", "Recv", "Alignment", "", "%d", (c) => c.remoteAlign.recv],
  ["REMOTE_SEND_WIDTH", "Remote", "Send", "Width", "", "%d", (c) => c.response.sendWidth],
  ["REMOTE_RECV_WIDTH", "Remote", "Recv", "Width", "", "%d", (c) => c.response.recvWidth],
  ["REMOTE_SEND_DIRTY_COUNT", "Remote", "Send", "Dirty", "Count", "%d", () => -1],
  ["REMOTE_RECV_DIRTY_COUNT", "Remote", "Recv", "Dirty", "Count", "%d", () => -1],
  ["REMOTE_RECV_CLEAN_COUNT", "Remote", "Recv", "Clean", "Count", "%d", () => -1],
  ["REMOTE_NODELAY", "Remote", "NODELAY", "", "", "%d", (c) => c.response.flags & 1],
  ["REMOTE_CORK", "Remote", "Cork", "", "", "%d", (c) => (c.cork ? 1 : 0)],
  ["LOCAL_SYSNAME", "Local", "Sysname", "", "", "%s", () => DEPRECATED],
  ["LOCAL_SYSTEM_MODEL", "Local", "System", "Model", "", "%s", () => DEPRECATED],
  ["LOCAL_RELEASE", "Local", "Release", "", "", "%s", () => DEPRECATED],
  ["LOCAL_VERSION", "Local", "Version", "", "", "%s", () => DEPRECATED],
  ["LOCAL_MACHINE", "Local", "Machine", "", "", "%s", () => DEPRECATED],
  ["REMOTE_SYSNAME", "Remote", "Sysname", "", "", "%s", () => DEPRECATED],
  ["REMOTE_SYSTEM_MODEL", "Remote", "System", "Model", "", "%s", () => DEPRECATED],
  ["REMOTE_RELEASE", "Remote", "Release", "", "", "%s", () => DEPRECATED],
  ["REMOTE_VERSION", "Remote", "Version", "", "", "%s", () => DEPRECATED],
  ["REMOTE_MACHINE", "Remote", "Machine", "", "", "%s", () => DEPRECATED],
  ["LOCAL_INTERFACE_NAME", "Local", "Interface", "Name", "", "%s", () => DEPRECATED],
  ["LOCAL_INTERFACE_VENDOR", "Local", "Interface", "Vendor", "", "0x%.4x", () => -2],
  ["LOCAL_INTERFACE_DEVICE", "Local", "Interface", "Device", "", "0x%.4x", () => -2],
  ["LOCAL_INTERFACE_SUBVENDOR", "Local", "Interface", "Subvendor", "", "0x%.4x", () => -2],
  ["LOCAL_INTERFACE_SUBDEVICE", "Local", "Interface", "Subdevice", "", "0x%.4x", () => -2],
  ["LOCAL_DRIVER_NAME", "Local", "Driver", "Name", "", "%s", () => DEPRECATED],
  ["LOCAL_DRIVER_VERSION", "Local", "Driver", "Version", "", "%s", () => DEPRECATED],
  ["LOCAL_DRIVER_FIRMWARE", "Local", "Driver", "Firmware", "", "%s", () => DEPRECATED],
  ["LOCAL_DRIVER_BUS", "Local", "Driver", "Bus", "", "%s", () => DEPRECATED],
  ["LOCAL_INTERFACE_SLOT", "Local", "Interface", "Slot", "", "%s", () => DEPRECATED],
  ["REMOTE_INTERFACE_NAME", "Remote", "Interface", "Name", "", "%s", () => DEPRECATED],
  ["REMOTE_INTERFACE_VENDOR", "Remote", "Interface", "Vendor", "", "0x%.4x", () => -2],
  ["REMOTE_INTERFACE_DEVICE", "Remote", "Interface", "Device", "", "0x%.4x", () => -2],
  ["REMOTE_INTERFACE_SUBVENDOR", "Remote", "Interface", "Subvendor", "", "0x%.4x", () => -2],
  ["REMOTE_INTERFACE_SUBDEVICE", "Remote", "Interface", "Subdevice", "", "0x%.4x", () => -2],
  ["REMOTE_DRIVER_NAME", "Remote", "Driver", "Name", "", "%s", () => DEPRECATED],
  ["REMOTE_DRIVER_VERSION", "Remote", "Driver", "Version", "", "%s", () => DEPRECATED],
  ["REMOTE_DRIVER_FIRMWARE", "Remote", "Driver", "Firmware", "", "%s", () => DEPRECATED],
  ["REMOTE_DRIVER_BUS", "Remote", "Driver", "Bus", "", "%s", () => DEPRECATED],
  ["REMOTE_INTERFACE_SLOT", "Remote", "Interface", "Slot", "", "%s", () => DEPRECATED],
  ["LOCAL_INTERVAL_USECS", "Local", "Interval", "Usecs", "", "%d", () => 0],
  ["LOCAL_INTERVAL_BURST", "Local", "Interval", "Burst", "", "%d", () => 0],
  ["REMOTE_INTERVAL_USECS", "Remote", "Interval", "Usecs", "", "%d", (c) => c.response.intervalUsecs],
  ["REMOTE_INTERVAL_BURST", "Remote", "Interval", "Burst", "", "%d", (c) => c.response.intervalBurst],
  ["LOCAL_SECURITY_TYPE_ID", "Local", "OS", "Security", "Type ID", "%d", () => 0],
  ["LOCAL_SECURITY_TYPE", "Local", "OS", "Security", "Type", "%s", () => DEPRECATED],
  ["LOCAL_SECURITY_ENABLED_NUM", "Local", "OS", "Security", "Enabled Num", "%d", () => 0],
  ["LOCAL_SECURITY_ENABLED", "Local", "OS", "Security", "Enabled", "%s", () => DEPRECATED],
  ["LOCAL_SECURITY_SPECIFIC", "Local", "OS", "Security", "Specific", "%s", () => DEPRECATED],
  ["REMOTE_SECURITY_TYPE_ID", "Remote", "OS", "Security", "Type", "%d", () => 0],
  ["REMOTE_SECURITY_TYPE", "Remote", "OS", "Security", "Type", "%s", () => DEPRECATED],
  ["REMOTE_SECURITY_ENABLED_NUM", "Remote", "OS", "Security", "Enabled", "%d", () => 0],
  ["REMOTE_SECURITY_ENABLED", "Remote", "OS", "Security", "Enabled", "%s", () => DEPRECATED],
  ["REMOTE_SECURITY_SPECIFIC", "Remote", "OS", "Security", "Specific", "%s", () => DEPRECATED],
  ["RESULT_BRAND", "Result", "Tag", "", "", '"%s"', (c) => c.brand],
  ["UUID", "Test", "UUID", "", "", "%s", (c) => c.uuid],
  ["MIN_LATENCY", "Minimum", "Latency", "Microseconds", "", "%d", (c) => c.f.latency?.min ?? -1],
  ["MAX_LATENCY", "Maximum", "Latency", "Microseconds", "", "%d", (c) => c.f.latency?.max ?? -1],
  ["P50_LATENCY", "50th", "Percentile", "Latency", "Microseconds", "%d", (c) => c.f.latency?.p50 ?? -1],
  ["P90_LATENCY", "90th", "Percentile", "Latency", "Microseconds", "%d", (c) => c.f.latency?.p90 ?? -1],
  ["P99_LATENCY", "99th", "Percentile", "Latency", "Microseconds", "%d", (c) => c.f.latency?.p99 ?? -1],
  ["MEAN_LATENCY", "Mean", "Latency", "Microseconds", "", "%.2f", (c) => c.f.latency?.mean ?? -1],
  ["STDDEV_LATENCY", "Stddev", "Latency", "Microseconds", "", "%.2f", (c) => c.f.latency?.stddev ?? -1],
  ["LOCAL_SOCKET_PRIO", "Local", "Socket", "Priority", "", "%d", (c) => c.localSocketPrio],
  ["REMOTE_SOCKET_PRIO", "Remote", "Socket", "Priority", "", "%d", (c) => c.remoteSocketPrio],
  ["LOCAL_SOCKET_TOS", "Local", "Socket", "TOS", "", "0x%.2x", (c) => c.localSocketTos],
  ["REMOTE_SOCKET_TOS", "Remote", "Socket", "TOS", "", "0x%.2x", (c) => c.remoteSocketTos],
  ["LOCAL_CONG_CONTROL", "Local", "Congestion", "Control", "Algorithm", "%s", (c) => c.localCongestion],
  ["REMOTE_CONG_CONTROL", "Remote", "Congestion", "Control", "Algorithm", "%s", (c) => c.remoteCongestion],
  ["LOCAL_FILL_FILE", "Local", "Fill", "File", "", "%s", (c) => c.localFillFile],
  ["REMOTE_FILL_FILE", "Remote", "Fill", "File", "", "%s", (c) => c.remoteFillFile],
  ["COMMAND_LINE", "Command", "Line", "", "", '"%s"', (c) => c.commandLine],
  ["OUTPUT_END", "This", "Is", "The", "End", "%s", () => undefined],
];

export const SELECTORS: readonly Selector[] = ROWS.map(([name, a, b, c, d, format, value]) => ({ name, lines: [a, b, c, d], format, value }));

const BY_NAME = new Map(SELECTORS.map((s) => [s.name, s]));

export function selectorByName(name: string): Selector | undefined {
  return BY_NAME.get(name.toUpperCase());
}

/** Selectors that make netperf time every transaction (its OMNI_WANT_STATS group). */
export const LATENCY_SELECTORS = new Set(["MIN_LATENCY", "MAX_LATENCY", "P50_LATENCY", "P90_LATENCY", "P99_LATENCY", "MEAN_LATENCY", "STDDEV_LATENCY"]);

/** `-o ?` / `-k ?` (comma separated) and `-O ?` (one per line). */
export function selectorListing(commaSeparated: boolean): string {
  return `${SELECTORS.map((s) => s.name).join(commaSeparated ? "," : "\n")}\n`;
}
