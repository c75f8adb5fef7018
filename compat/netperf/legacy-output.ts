import type { MigratedTest } from "../../interop/netperf/test-request.ts";
import { calcThruput, formatUnits, type Figures } from "./figures.ts";
import { sprintf } from "./printf.ts";

/**
 * netperf 2.7.0's console output for the migrated classic tests (send_tcp_stream & co. in nettest_omni.c): the
 * top header line, then per test and verbosity the title and value lines, byte for byte, trailing spaces included.
 */

export interface TopHeaderInput {
  test: MigratedTest;
  /** The title when it is not the migrated test's (-t omni, TCP_MSS). */
  title?: string;
  localName: string;
  localAddress: string;
  localPort: number;
  localFamily: "ipv4" | "ipv6";
  remoteName: string;
  remoteAddress: string;
  remotePort: number;
  remoteFamily: "ipv4" | "ipv6";
  iterationMax: number;
  confidenceInterval: number;
  confidenceLevel: number;
  noDelay: boolean;
  copyAvoidance: boolean;
  firstBurst: number;
  cpuBind: boolean;
}

export function testTitle(test: MigratedTest): string {
  const titles: Record<MigratedTest, string> = {
    TCP_STREAM: "MIGRATED TCP STREAM TEST",
    TCP_MAERTS: "MIGRATED TCP MAERTS TEST",
    UDP_STREAM: "MIGRATED UDP STREAM TEST",
    TCP_RR: "MIGRATED TCP REQUEST/RESPONSE TEST",
    TCP_CRR: "MIGRATED TCP Connect/Request/Response TEST",
    UDP_RR: "MIGRATED UDP REQUEST/RESPONSE TEST",
  };
  return titles[test];
}

/** netperf prints addresses through an 8-byte buffer, so anything longer than 7 characters prints as empty. */
function shortAddress(a: string): string {
  return a.length <= 7 ? a : "";
}

const famName = (f: "ipv4" | "ipv6") => (f === "ipv6" ? "AF_INET6" : "AF_INET");

export function topHeader(h: TopHeaderInput): string {
  const title = h.title ?? testTitle(h.test);
  let s = `${title} from ${h.localName} (${shortAddress(h.localAddress)}) port ${h.localPort} ${famName(h.localFamily)}`;
  s += ` to ${h.remoteName} (${shortAddress(h.remoteAddress)}) port ${h.remotePort} ${famName(h.remoteFamily)}`;
  if (h.iterationMax > 1) s += sprintf(" : +/-%.3f%% @ %2d%% conf. %s", h.confidenceInterval / 0.02, h.confidenceLevel, "");
  if (h.noDelay) s += " : nodelay";
  if (h.copyAvoidance) s += " : copy avoidance";
  // The Debian build has WANT_DEMO and WANT_FIRST_BURST compiled in.
  s += " : demo";
  if (title.includes("REQUEST/RESPONSE")) s += ` : first burst ${h.firstBurst}`;
  if (h.cpuBind) s += " : cpu bind";
  return `${s}\n`;
}

export interface LegacyInput {
  test: MigratedTest;
  /** TCP_CC, printed as TCP_CRR is but for the verbose block's remote column (netperf prints the receive offset). */
  connectClose?: boolean;
  /** TCP_SENDFILE, printed as TCP_STREAM is but for the bytes of the verbose block (%6.4g, as a double). */
  sendfile?: boolean;
  f: Figures;
  printHeaders: boolean;
  verbosity: number;
  brand: string | undefined;
  /** -c given, and MEASURE_CPU granted by the server (netperf's local_cpu_usage / remote_cpu_usage). */
  localCpu: boolean;
  remoteCpu: boolean;
  lss: number;
  lsr: number;
  rss: number;
  rsr: number;
  sendSize: number;
  remoteSendSize: number;
  requestSize: number;
  responseSize: number;
  localSendCalls: number;
  localRecvCalls: number;
  failedSends: number;
  remoteRecvCalls: number;
  remoteSendCalls: number;
  localAlign: { send: number; recv: number };
  remoteAlign: { send: number; recv: number };
  localOffset: { send: number; recv: number };
  remoteOffset: { send: number; recv: number };
  transportMss: number;
  firstBurst: number;
}

export function legacyBody(i: LegacyInput): string {
  switch (i.test) {
    case "TCP_STREAM":
    case "TCP_MAERTS":
      return streamBody(i);
    case "UDP_STREAM":
      return udpStreamBody(i);
    case "TCP_RR":
    case "UDP_RR":
      return rrBody(i);
    case "TCP_CRR":
      return crrBody(i);
  }
}

function brandOf(i: LegacyInput): string {
  return i.printHeaders || i.brand === undefined ? "" : i.brand;
}

/**
 * One test's pieces of output; netperf picks among them the same way for every migrated test: with CPU figures
 * or without, terse (-v 0) or titled rows (-v 1 and 2, titles unless -P 0), and a verbose block past -v 1.
 */
interface Layout {
  terse(cpu: boolean): string;
  titles(cpu: boolean): string;
  rows(cpu: boolean): string;
  verbose(): string;
}

function render(i: LegacyInput, l: Layout): string {
  const cpu = i.localCpu || i.remoteCpu;
  let out = "";
  if (i.verbosity === 0) out += l.terse(cpu);
  else if (i.verbosity === 1 || i.verbosity === 2) out += (i.printHeaders ? l.titles(cpu) : "") + l.rows(cpu);
  if (i.verbosity > 1) out += l.verbose();
  return out;
}

/** -v 0: the service demand of the side that measured CPU, or the throughput. */
function terseFigure(i: LegacyInput, cpu: boolean): string {
  const { f } = i;
  if (!cpu) return sprintf("%7.2f %s\n", f.thruput, brandOf(i));
  return i.localCpu ? sprintf("%6.3f %c %s\n", f.localSd, f.localCpuMethod, brandOf(i)) : sprintf("%6.3f %c %s\n", f.remoteSd, f.remoteCpuMethod, brandOf(i));
}

/** The figures of a CPU table row, in netperf's column order: time, throughput, utilization and service demand. */
const cpuColumns = (f: Figures) => [f.elapsed, f.thruput, f.localCpuUtil, f.remoteCpuUtil, f.localSd, f.remoteSd];

/** Titles of the request/response tables in transactions (CPU method letters blank where netperf prints none). */
const transTitles = (cpuMethods: [string, string] | undefined) =>
  cpuMethods
    ? "Local /Remote\n" +
      "Socket Size   Request Resp.  Elapsed Trans.   CPU    CPU    S.dem   S.dem\n" +
      "Send   Recv   Size    Size   Time    Rate     local  remote local   remote\n" +
      sprintf("bytes  bytes  bytes   bytes  secs.   per sec  %% %c    %% %c    us/Tr   us/Tr\n\n", cpuMethods[0], cpuMethods[1])
    : "Local /Remote\n" +
      "Socket Size   Request  Resp.   Elapsed  Trans.\n" +
      "Send   Recv   Size     Size    Time     Rate         \n" +
      "bytes  Bytes  bytes    bytes   secs.    per sec   \n\n";

/** The remote socket sizes: the second row of every request/response table. */
const remoteSizesRow = (i: LegacyInput) => sprintf("%-6d %-6d\n", i.rss, i.rsr);

function streamBody(i: LegacyInput): string {
  const { f } = i;
  const maerts = i.test === "TCP_MAERTS";
  const dirs = maerts ? ["Recv", "Send", "Recv", "Send"] : ["Send", "Recv", "Send", "Recv"];
  return render(i, {
    terse: (cpu) => terseFigure(i, cpu),
    titles: (cpu) =>
      cpu
        ? "Recv   Send    Send                          Utilization       Service Demand\n" +
          `Socket Socket  Message  Elapsed              ${dirs[0]}     ${dirs[1]}     ${dirs[2]}    ${dirs[3]}\n` +
          "Size   Size    Size     Time     Throughput  local    remote   local   remote\n" +
          sprintf("bytes  bytes   bytes    secs.    %-8.8s/s  %% %c      %% %c      us/KB   us/KB\n\n", f.unitsText, f.localCpuMethod, f.remoteCpuMethod)
        : "Recv   Send    Send                          \n" +
          "Socket Socket  Message  Elapsed              \n" +
          "Size   Size    Size     Time     Throughput  \n" +
          sprintf("bytes  bytes   bytes    secs.    %s/sec  \n\n", f.unitsText),
    rows: (cpu) => {
      if (cpu) {
        return sprintf(
          "%6d %6d %6d    %-6.2f     %7.2f   %-6.2f   %-6.2f   %-6.3f  %-6.3f %s\n",
          i.rsr,
          i.lss,
          maerts ? i.remoteSendSize : i.sendSize,
          ...cpuColumns(f),
          brandOf(i),
        );
      }
      return maerts
        ? sprintf("%6d %6d %6d    %-6.2f   %7.2f   %s\n", i.lsr, i.rss, i.remoteSendSize, f.elapsed, f.thruput, brandOf(i))
        : sprintf("%6d %6d %6d    %-6.2f   %7.2f   %s\n", i.rsr, i.lss, i.sendSize, f.elapsed, f.thruput, brandOf(i));
    },
    verbose: () => {
      // The local side's direction first: MAERTS receives, STREAM sends.
      const [mine, theirs] = dirs;
      const side = maerts ? "recv" : "send";
      const [bytes, calls, remoteBytes, remoteCalls] = maerts
        ? [f.bytesReceived, i.localRecvCalls, f.remoteBytesSent, i.remoteSendCalls]
        : [f.bytesSent, i.localSendCalls, f.bytesSent, i.remoteRecvCalls];
      const out = sprintf(
        `\nAlignment      Offset         %-8.8s %-8.8s    ${mine}s   %-8.8s ${theirs}s\n` +
          "Local  Remote  Local  Remote  Xfered   Per                 Per\n" +
          `${mine}   ${theirs}    ${mine}   ${theirs}             ${mine} (avg)          ${theirs} (avg)\n` +
          `%5d   %5d  %5d   %5d ${i.sendfile ? "%6.4g" : "%6d"}  %6.2f    %6d   %6.2f %6d\n`,
        "Bytes",
        "Bytes",
        "Bytes",
        i.localAlign[side],
        i.remoteAlign.recv,
        i.localOffset[side],
        i.remoteOffset.recv,
        bytes,
        bytes / calls,
        calls,
        remoteBytes / remoteCalls,
        remoteCalls,
      );
      return out + sprintf("\nMaximum\nSegment\nSize (bytes)\n%6d\n", i.transportMss);
    },
  });
}

function udpStreamBody(i: LegacyInput): string {
  const { f } = i;
  return render(i, {
    // netperf prints the local method letter in both cases.
    terse: (cpu) => (cpu ? sprintf("%6.2f %c\n", i.localCpu ? f.localSd : f.remoteSd, f.localCpuMethod) : sprintf("%7.2f\n", f.localSendThruput)),
    titles: (cpu) =>
      cpu
        ? "Socket  Message  Elapsed      Messages                   CPU      Service\n" +
          "Size    Size     Time         Okay Errors   Throughput   Util     Demand\n" +
          sprintf("bytes   bytes    secs            #      #   %s/sec %% %c%c     us/KB\n\n", f.unitsText, f.localCpuMethod, f.remoteCpuMethod)
        : "Socket  Message  Elapsed      Messages                \n" +
          "Size    Size     Time         Okay Errors   Throughput\n" +
          sprintf("bytes   bytes    secs            #      #   %s/sec\n\n", f.unitsText),
    rows: (cpu) =>
      cpu
        ? sprintf(
            "%6d  %6d   %-7.2f   %7d %6d    %7.1f     %-6.2f   %-6.3f\n%6d           %-7.2f   %7d           %7.1f     %-6.2f   %-6.3f\n\n",
            i.lss,
            i.sendSize,
            f.elapsed,
            i.localSendCalls,
            i.failedSends,
            f.localSendThruput,
            f.localCpuUtil,
            f.localSd,
            i.rsr,
            f.elapsed,
            i.remoteRecvCalls,
            f.remoteRecvThruput,
            f.remoteCpuUtil,
            f.remoteSd,
          )
        : sprintf(
            "%6d  %6d   %-7.2f   %7d %6d    %7.2f\n%6d           %-7.2f   %7d           %7.2f\n\n",
            i.lss,
            i.sendSize,
            f.elapsed,
            i.localSendCalls,
            i.failedSends,
            f.localSendThruput,
            i.rsr,
            f.elapsed,
            i.remoteRecvCalls,
            f.remoteRecvThruput,
          ),
    verbose: () => "",
  });
}

function rrBody(i: LegacyInput): string {
  const { f } = i;
  const udp = i.test === "UDP_RR";
  const trans = f.libfmt === "x";
  return render(i, {
    terse: (cpu) => terseFigure(i, cpu),
    titles: (cpu) => {
      if (trans) return transTitles(cpu ? [f.localCpuMethod, f.remoteCpuMethod] : undefined);
      return cpu
        ? "Local /Remote\n" +
            "Socket Size   Request Resp.  Elapsed Tput     CPU    CPU    S.dem   S.dem\n" +
            sprintf("Send   Recv   Size    Size   Time    %-8.8s local  remote local   remote\n", f.unitsText) +
            sprintf("bytes  bytes  bytes   bytes  secs.   per sec  %% %c    %% %c    us/KB   us/KB\n\n", f.localCpuMethod, f.remoteCpuMethod)
        : "Local /Remote\n" +
            "Socket Size   Request  Resp.   Elapsed  \n" +
            "Send   Recv   Size     Size    Time     Throughput \n" +
            sprintf("bytes  Bytes  bytes    bytes   secs.    %s/sec   \n\n", f.unitsText);
    },
    rows: (cpu) => {
      if (!cpu) return sprintf("%-6d %-6d %-6d   %-6d  %-6.2f   %7.2f   %s\n", i.lss, i.lsr, i.requestSize, i.responseSize, f.elapsed, f.thruput, brandOf(i)) + remoteSizesRow(i);
      const line = udp
        ? "%-6d %-6d %-6d  %-6d %-6.2f  %-6.2f   %-6.2f %-6.2f %-6.3f  %-6.3f %s\n"
        : "%-6d %-6d %-6d  %-6d %-6.2f  %-6.2f  %-6.2f %-6.2f %-6.3f  %-6.3f %s\n";
      return sprintf(line, i.lss, i.lsr, i.requestSize, i.responseSize, ...cpuColumns(f), brandOf(i)) + remoteSizesRow(i);
    },
    verbose: () => {
      if (udp) return "";
      const fmt = trans ? "m" : f.libfmt;
      const burst = Math.max(0, i.firstBurst);
      return sprintf(
        "Alignment      Offset         RoundTrip  Trans    Throughput\n" +
          "Local  Remote  Local  Remote  Latency    Rate     %-8.8s/s\n" +
          "Send   Recv    Send   Recv    usec/Tran  per sec  Outbound   Inbound\n" +
          "%5d  %5d   %5d  %5d   %-6.3f   %-6.3f %-6.3f    %-6.3f\n",
        formatUnits(fmt),
        i.localAlign.send,
        i.remoteOffset.recv,
        i.localOffset.send,
        i.remoteOffset.recv,
        (1 / f.transactionRate) * 1e6 * (1 + burst),
        f.transactionRate,
        calcThruput(f.transactionRate * i.requestSize, 1, fmt),
        calcThruput(f.transactionRate * i.responseSize, 1, fmt),
      );
    },
  });
}

/** TCP_CRR prints no brand, and blanks where the other request/response tests print the CPU method letters. */
function crrBody(i: LegacyInput): string {
  const { f } = i;
  return render(i, {
    terse: (cpu) => (cpu ? sprintf("%6.3f\n", i.localCpu ? f.localSd : f.remoteSd) : sprintf("%7.2f\n", f.thruput)),
    titles: (cpu) => transTitles(cpu ? [" ", " "] : undefined),
    rows: (cpu) =>
      (cpu
        ? sprintf(
            "%-6d %-6d %-6d  %-6d %-6.2f  %-6.2f   %-6.2f %-6.2f %-6.3f  %-6.3f\n",
            i.lss,
            i.lsr,
            i.requestSize,
            i.responseSize,
            ...cpuColumns(f),
          )
        : sprintf("%-6d %-6d %-6d   %-6d  %-6.2f   %7.2f   \n", i.lss, i.lsr, i.requestSize, i.responseSize, f.elapsed, f.thruput)) + remoteSizesRow(i),
    verbose: () =>
      sprintf(
        "\nAlignment      Offset\nLocal  Remote  Local  Remote\nSend   Recv    Send   Recv\n%5d  %5d   %5d  %5d\n",
        i.localAlign.send,
        i.connectClose ? i.remoteOffset.recv : i.remoteAlign.recv,
        i.localOffset.send,
        i.remoteOffset.recv,
      ),
  });
}
