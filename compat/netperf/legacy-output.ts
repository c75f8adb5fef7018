import type { MigratedTest } from "../../interop/netperf/test-request.ts";
import { calcThruput, formatUnits, type Figures } from "./figures.ts";
import { sprintf } from "./printf.ts";

/**
 * netperf 2.7.0's console output for the migrated classic tests (send_tcp_stream & co. in nettest_omni.c): the
 * top header line, then per test and verbosity the title and value lines, byte for byte, trailing spaces included.
 */

export interface TopHeaderInput {
  test: MigratedTest;
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
  const title = testTitle(h.test);
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

function streamBody(i: LegacyInput): string {
  const { f } = i;
  const maerts = i.test === "TCP_MAERTS";
  const dirs = maerts ? ["Recv", "Send", "Recv", "Send"] : ["Send", "Recv", "Send", "Recv"];
  let out = "";
  if (i.localCpu || i.remoteCpu) {
    if (i.verbosity === 0) {
      out += i.localCpu ? sprintf("%6.3f %c %s\n", f.localSd, f.localCpuMethod, brandOf(i)) : sprintf("%6.3f %c %s\n", f.remoteSd, f.remoteCpuMethod, brandOf(i));
    } else if (i.verbosity === 1 || i.verbosity === 2) {
      if (i.printHeaders) {
        out +=
          "Recv   Send    Send                          Utilization       Service Demand\n" +
          `Socket Socket  Message  Elapsed              ${dirs[0]}     ${dirs[1]}     ${dirs[2]}    ${dirs[3]}\n` +
          "Size   Size    Size     Time     Throughput  local    remote   local   remote\n" +
          sprintf("bytes  bytes   bytes    secs.    %-8.8s/s  %% %c      %% %c      us/KB   us/KB\n\n", f.unitsText, f.localCpuMethod, f.remoteCpuMethod);
      }
      out += sprintf(
        "%6d %6d %6d    %-6.2f     %7.2f   %-6.2f   %-6.2f   %-6.3f  %-6.3f %s\n",
        i.rsr,
        i.lss,
        maerts ? i.remoteSendSize : i.sendSize,
        f.elapsed,
        f.thruput,
        f.localCpuUtil,
        f.remoteCpuUtil,
        f.localSd,
        f.remoteSd,
        brandOf(i),
      );
    }
  } else if (i.verbosity === 0) {
    out += sprintf("%7.2f %s\n", f.thruput, brandOf(i));
  } else if (i.verbosity === 1 || i.verbosity === 2) {
    if (i.printHeaders) {
      out +=
        "Recv   Send    Send                          \n" +
        "Socket Socket  Message  Elapsed              \n" +
        "Size   Size    Size     Time     Throughput  \n" +
        sprintf("bytes  bytes   bytes    secs.    %s/sec  \n\n", f.unitsText);
    }
    out += maerts
      ? sprintf("%6d %6d %6d    %-6.2f   %7.2f   %s\n", i.lsr, i.rss, i.remoteSendSize, f.elapsed, f.thruput, brandOf(i))
      : sprintf("%6d %6d %6d    %-6.2f   %7.2f   %s\n", i.rsr, i.lss, i.sendSize, f.elapsed, f.thruput, brandOf(i));
  }
  if (i.verbosity > 1) {
    if (maerts) {
      out += sprintf(
        "\nAlignment      Offset         %-8.8s %-8.8s    Recvs   %-8.8s Sends\n" +
          "Local  Remote  Local  Remote  Xfered   Per                 Per\n" +
          "Recv   Send    Recv   Send             Recv (avg)          Send (avg)\n" +
          "%5d   %5d  %5d   %5d %6d  %6.2f    %6d   %6.2f %6d\n",
        "Bytes",
        "Bytes",
        "Bytes",
        i.localAlign.recv,
        i.remoteAlign.recv,
        i.localOffset.recv,
        i.remoteOffset.recv,
        f.bytesReceived,
        f.bytesReceived / i.localRecvCalls,
        i.localRecvCalls,
        f.remoteBytesSent / i.remoteSendCalls,
        i.remoteSendCalls,
      );
    } else {
      out += sprintf(
        "\nAlignment      Offset         %-8.8s %-8.8s    Sends   %-8.8s Recvs\n" +
          "Local  Remote  Local  Remote  Xfered   Per                 Per\n" +
          "Send   Recv    Send   Recv             Send (avg)          Recv (avg)\n" +
          "%5d   %5d  %5d   %5d %6d  %6.2f    %6d   %6.2f %6d\n",
        "Bytes",
        "Bytes",
        "Bytes",
        i.localAlign.send,
        i.remoteAlign.recv,
        i.localOffset.send,
        i.remoteOffset.recv,
        f.bytesSent,
        f.bytesSent / i.localSendCalls,
        i.localSendCalls,
        f.bytesSent / i.remoteRecvCalls,
        i.remoteRecvCalls,
      );
    }
    out += sprintf("\nMaximum\nSegment\nSize (bytes)\n%6d\n", i.transportMss);
  }
  return out;
}

function udpStreamBody(i: LegacyInput): string {
  const { f } = i;
  let out = "";
  if (i.localCpu || i.remoteCpu) {
    if (i.verbosity === 0) {
      // netperf prints the local method letter in both cases.
      out += sprintf("%6.2f %c\n", i.localCpu ? f.localSd : f.remoteSd, f.localCpuMethod);
    } else if (i.verbosity === 1 || i.verbosity === 2) {
      if (i.printHeaders) {
        out +=
          "Socket  Message  Elapsed      Messages                   CPU      Service\n" +
          "Size    Size     Time         Okay Errors   Throughput   Util     Demand\n" +
          sprintf("bytes   bytes    secs            #      #   %s/sec %% %c%c     us/KB\n\n", f.unitsText, f.localCpuMethod, f.remoteCpuMethod);
      }
      out += sprintf(
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
      );
    }
  } else if (i.verbosity === 0) {
    out += sprintf("%7.2f\n", f.localSendThruput);
  } else if (i.verbosity === 1 || i.verbosity === 2) {
    if (i.printHeaders) {
      out +=
        "Socket  Message  Elapsed      Messages                \n" +
        "Size    Size     Time         Okay Errors   Throughput\n" +
        sprintf("bytes   bytes    secs            #      #   %s/sec\n\n", f.unitsText);
    }
    out += sprintf(
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
    );
  }
  return out;
}

function rrBody(i: LegacyInput): string {
  const { f } = i;
  const udp = i.test === "UDP_RR";
  let out = "";
  if (i.localCpu || i.remoteCpu) {
    if (i.verbosity === 0) {
      out += i.localCpu ? sprintf("%6.3f %c %s\n", f.localSd, f.localCpuMethod, brandOf(i)) : sprintf("%6.3f %c %s\n", f.remoteSd, f.remoteCpuMethod, brandOf(i));
    } else if (i.verbosity === 1 || i.verbosity === 2) {
      if (i.printHeaders) {
        out +=
          f.libfmt === "x"
            ? "Local /Remote\n" +
              "Socket Size   Request Resp.  Elapsed Trans.   CPU    CPU    S.dem   S.dem\n" +
              "Send   Recv   Size    Size   Time    Rate     local  remote local   remote\n" +
              sprintf("bytes  bytes  bytes   bytes  secs.   per sec  %% %c    %% %c    us/Tr   us/Tr\n\n", f.localCpuMethod, f.remoteCpuMethod)
            : "Local /Remote\n" +
              "Socket Size   Request Resp.  Elapsed Tput     CPU    CPU    S.dem   S.dem\n" +
              sprintf("Send   Recv   Size    Size   Time    %-8.8s local  remote local   remote\n", f.unitsText) +
              sprintf("bytes  bytes  bytes   bytes  secs.   per sec  %% %c    %% %c    us/KB   us/KB\n\n", f.localCpuMethod, f.remoteCpuMethod);
      }
      const line = udp
        ? "%-6d %-6d %-6d  %-6d %-6.2f  %-6.2f   %-6.2f %-6.2f %-6.3f  %-6.3f %s\n"
        : "%-6d %-6d %-6d  %-6d %-6.2f  %-6.2f  %-6.2f %-6.2f %-6.3f  %-6.3f %s\n";
      out += sprintf(line, i.lss, i.lsr, i.requestSize, i.responseSize, f.elapsed, f.thruput, f.localCpuUtil, f.remoteCpuUtil, f.localSd, f.remoteSd, brandOf(i));
      out += sprintf("%-6d %-6d\n", i.rss, i.rsr);
    }
  } else if (i.verbosity === 0) {
    out += sprintf("%7.2f %s\n", f.thruput, brandOf(i));
  } else if (i.verbosity === 1 || i.verbosity === 2) {
    if (i.printHeaders) {
      out +=
        f.libfmt === "x"
          ? "Local /Remote\n" +
            "Socket Size   Request  Resp.   Elapsed  Trans.\n" +
            "Send   Recv   Size     Size    Time     Rate         \n" +
            "bytes  Bytes  bytes    bytes   secs.    per sec   \n\n"
          : "Local /Remote\n" +
            "Socket Size   Request  Resp.   Elapsed  \n" +
            "Send   Recv   Size     Size    Time     Throughput \n" +
            sprintf("bytes  Bytes  bytes    bytes   secs.    %s/sec   \n\n", f.unitsText);
    }
    out += sprintf("%-6d %-6d %-6d   %-6d  %-6.2f   %7.2f   %s\n", i.lss, i.lsr, i.requestSize, i.responseSize, f.elapsed, f.thruput, brandOf(i));
    out += sprintf("%-6d %-6d\n", i.rss, i.rsr);
  }
  if (i.verbosity > 1 && !udp) {
    const fmt = f.libfmt === "x" ? "m" : f.libfmt;
    const burst = Math.max(0, i.firstBurst);
    out += sprintf(
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
  }
  return out;
}

function crrBody(i: LegacyInput): string {
  const { f } = i;
  let out = "";
  if (i.localCpu || i.remoteCpu) {
    if (i.verbosity === 0) {
      out += sprintf("%6.3f\n", i.localCpu ? f.localSd : f.remoteSd);
    } else if (i.verbosity === 1 || i.verbosity === 2) {
      if (i.printHeaders) {
        out +=
          "Local /Remote\n" +
          "Socket Size   Request Resp.  Elapsed Trans.   CPU    CPU    S.dem   S.dem\n" +
          "Send   Recv   Size    Size   Time    Rate     local  remote local   remote\n" +
          "bytes  bytes  bytes   bytes  secs.   per sec  %      %      us/Tr   us/Tr\n\n";
      }
      out += sprintf(
        "%-6d %-6d %-6d  %-6d %-6.2f  %-6.2f   %-6.2f %-6.2f %-6.3f  %-6.3f\n",
        i.lss,
        i.lsr,
        i.requestSize,
        i.responseSize,
        f.elapsed,
        f.thruput,
        f.localCpuUtil,
        f.remoteCpuUtil,
        f.localSd,
        f.remoteSd,
      );
      out += sprintf("%-6d %-6d\n", i.rss, i.rsr);
    }
  } else if (i.verbosity === 0) {
    out += sprintf("%7.2f\n", f.thruput);
  } else if (i.verbosity === 1 || i.verbosity === 2) {
    if (i.printHeaders) {
      out +=
        "Local /Remote\n" +
        "Socket Size   Request  Resp.   Elapsed  Trans.\n" +
        "Send   Recv   Size     Size    Time     Rate         \n" +
        "bytes  Bytes  bytes    bytes   secs.    per sec   \n\n";
    }
    out += sprintf("%-6d %-6d %-6d   %-6d  %-6.2f   %7.2f   \n", i.lss, i.lsr, i.requestSize, i.responseSize, f.elapsed, f.thruput);
    out += sprintf("%-6d %-6d\n", i.rss, i.rsr);
  }
  if (i.verbosity > 1) {
    out += sprintf(
      "\nAlignment      Offset\nLocal  Remote  Local  Remote\nSend   Recv    Send   Recv\n%5d  %5d   %5d  %5d\n",
      i.localAlign.send,
      i.remoteAlign.recv,
      i.localOffset.send,
      i.remoteOffset.recv,
    );
  }
  return out;
}
