import { cpuMethodLetter, OmniFlag } from "../../interop/netperf/constants.ts";
import type { ClientDataCounters } from "../../interop/netperf/client-session.ts";
import type { OmniResponse } from "../../interop/netperf/omni-response.ts";
import type { OmniResults } from "../../interop/netperf/omni-results.ts";
import { netperfRtLatencyUs, netperfServiceDemand, netperfThroughput, transactionsPerSecond } from "../../src/formulas.ts";
import { isRequestResponse, testShape, type MigratedTest } from "../../interop/netperf/test-request.ts";

/**
 * Every number netperf 2.7.0 prints for a test, computed the way it computes them (nettest_omni.c, netlib.c):
 * the client's elapsed time as a C float, throughput from the remote byte counts for sending tests and from the
 * local ones for receive-only tests, service demand per KB or per transaction including netperf's quirk that a
 * remote utilisation of exactly 0 is replaced by the local one.
 */

/** CPU figures of one side, in netperf's terms (percent of all CPUs). */
export interface CpuStats {
  util: number;
  user: number;
  system: number;
  iowait: number;
  irq: number;
  softirq: number;
  peakUtil: number;
  peakId: number;
  /** cpu_method code (8 = /proc/stat). */
  method: number;
  numCpus: number;
}

/** Latency statistics of the client's transactions, in whole microseconds (means to 2 decimals). */
export interface LatencyStats {
  min: number;
  max: number;
  mean: number;
  stddev: number;
  p50: number;
  p90: number;
  p99: number;
}

export interface LocalSockets {
  /** SO_SNDBUF / SO_RCVBUF as requested (-s), at creation, and at the end of the test. */
  sendRequested: number;
  recvRequested: number;
  send: number;
  recv: number;
  sendEnd: number;
  recvEnd: number;
}

export interface FigureInputs {
  test: MigratedTest;
  /** -f letter as given, or undefined for the test's default. */
  format: string | undefined;
  firstBurst: number;
  local: ClientDataCounters;
  /** Client send/recv sizes (0 in RR tests, as netperf reports them). */
  localSendSize: number;
  localRecvSize: number;
  sockets: LocalSockets;
  response: OmniResponse;
  results: OmniResults;
  localCpu: CpuStats | undefined;
  /** CPUs of this host, for service demand when the remote reports none. */
  localCpuCount: number;
  latency: LatencyStats | undefined;
}

export interface Figures {
  libfmt: string;
  unitsText: string;
  elapsed: number;
  thruput: number;
  transactionRate: number;
  rttLatency: number;
  localSendThruput: number;
  localRecvThruput: number;
  remoteSendThruput: number;
  remoteRecvThruput: number;
  bytesSent: number;
  bytesReceived: number;
  bytesXferd: number;
  remoteBytesSent: number;
  remoteBytesReceived: number;
  remoteBytesXferd: number;
  bytesPerSend: number;
  bytesPerRecv: number;
  remoteBytesPerSend: number;
  remoteBytesPerRecv: number;
  localCpuUtil: number;
  remoteCpuUtil: number;
  localSd: number;
  remoteSd: number;
  localCpuMethod: string;
  remoteCpuMethod: string;
  localCpu: CpuStats | undefined;
  remoteCpu: CpuStats;
  remoteCpuMeasured: boolean;
  sdUnits: string;
  latency: LatencyStats | undefined;
}

export function defaultFormat(test: MigratedTest, format: string | undefined): string {
  const rr = isRequestResponse(test);
  if (format === undefined) return rr ? "x" : "m";
  if (format === "x" && !rr) return "m";
  return format;
}

export function formatUnits(libfmt: string): string {
  const names: Record<string, string> = {
    B: "Bytes",
    K: "KBytes",
    M: "MBytes",
    G: "GBytes",
    b: "10^0bits",
    k: "10^3bits",
    m: "10^6bits",
    g: "10^9bits",
    x: "Trans",
    u: "Usec",
  };
  return names[libfmt] ?? "KBytes";
}

/** netperf's calc_thruput_interval: units per second in the -f unit (bits for lower-case letters). */
export function calcThruput(units: number, elapsed: number, libfmt: string): number {
  const divisors: Record<string, number> = {
    K: 1024,
    M: 1024 * 1024,
    G: 1024 * 1024 * 1024,
    k: 1000 / 8,
    m: (1000 * 1000) / 8,
    g: (1000 * 1000 * 1000) / 8,
    x: 1,
    b: 1,
    B: 1,
  };
  if (libfmt === "u") return (1 / (units / elapsed)) * 1e6;
  return netperfThroughput(units, elapsed, divisors[libfmt] ?? 1024);
}

/** netperf's calc_service_demand: µs of CPU per KB (or per transaction with -f x). */
export function serviceDemand(units: number, elapsed: number, cpuUtil: number, numCpus: number, libfmt: string): number {
  // netperf keeps the result in a C float.
  return Math.fround(netperfServiceDemand(cpuUtil, units, libfmt === "x" ? 1 : 1024, elapsed, numCpus));
}

export function computeFigures(i: FigureInputs): Figures {
  const libfmt = defaultFormat(i.test, i.format);
  const shape = testShape(i.test);
  const rr = isRequestResponse(i.test);
  const elapsed = Math.fround(i.local.elapsedS);
  const { results: res } = i;
  const bytesSent = i.local.bytesSent;
  const bytesReceived = i.local.bytesReceived;
  const bytesXferd = bytesSent + bytesReceived;
  const remoteBytesXferd = res.bytesReceived + res.bytesSent;
  const trans = i.local.transactions;
  const recvOnly = shape.clientReceives && !shape.clientSends;

  let thruput: number;
  if (libfmt === "x") thruput = calcThruput(trans, elapsed, "x");
  else if (recvOnly) thruput = calcThruput(bytesXferd, elapsed, libfmt);
  else thruput = calcThruput(remoteBytesXferd, elapsed, libfmt);

  // netperf's initial values, printed as they are for stream tests.
  let rttLatency = -1;
  let transactionRate = 1;
  if (rr) {
    const burst = i.test === "TCP_CRR" ? 0 : Math.max(0, i.firstBurst);
    rttLatency = netperfRtLatencyUs(transactionsPerSecond(trans, elapsed), burst);
    transactionRate = calcThruput(trans, elapsed, "x");
  }

  const streamFmt = libfmt === "x" ? "m" : libfmt;
  const sdUnits = libfmt === "x" ? "usec/Tran" : "usec/KB";
  const sdBasis = libfmt === "x" ? trans : bytesXferd;

  const localCpuUtil = i.localCpu ? Math.fround(i.localCpu.util) : -1;
  const localSd = i.localCpu ? serviceDemand(sdBasis, elapsed, localCpuUtil, i.localCpuCount, libfmt) : -1;

  const remoteCpuMeasured = (i.response.flags & OmniFlag.MEASURE_CPU) !== 0;
  let remoteCpuUtil = -1;
  let remoteSd = -1;
  if (remoteCpuMeasured) {
    remoteCpuUtil = Math.fround(res.cpuUtil);
    // netperf substitutes its own utilisation when the remote reports exactly 0, and its own CPU count for 0 CPUs.
    const util = remoteCpuUtil === 0 ? (i.localCpu?.util ?? 0) : remoteCpuUtil;
    remoteSd = serviceDemand(sdBasis, elapsed, util, res.numCpus === 0 ? i.localCpuCount : res.numCpus, libfmt);
  }

  return {
    libfmt,
    unitsText: formatUnits(libfmt),
    elapsed,
    thruput,
    transactionRate,
    rttLatency,
    localSendThruput: calcThruput(bytesSent, elapsed, streamFmt),
    localRecvThruput: calcThruput(bytesReceived, elapsed, streamFmt),
    remoteSendThruput: calcThruput(res.bytesSent, elapsed, streamFmt),
    remoteRecvThruput: calcThruput(res.bytesReceived, elapsed, streamFmt),
    bytesSent,
    bytesReceived,
    bytesXferd,
    remoteBytesSent: res.bytesSent,
    remoteBytesReceived: res.bytesReceived,
    remoteBytesXferd,
    bytesPerSend: i.local.sendCalls > 0 ? bytesSent / i.local.sendCalls : 0,
    bytesPerRecv: i.local.recvCalls > 0 ? bytesReceived / i.local.recvCalls : 0,
    remoteBytesPerSend: res.sendCalls > 0 ? res.bytesSent / res.sendCalls : 0,
    remoteBytesPerRecv: res.recvCalls > 0 ? res.bytesReceived / res.recvCalls : 0,
    localCpuUtil,
    remoteCpuUtil,
    localSd,
    remoteSd,
    localCpuMethod: cpuMethodLetter(i.localCpu?.method ?? 0),
    remoteCpuMethod: cpuMethodLetter(res.cpuMethod),
    localCpu: i.localCpu,
    remoteCpu: {
      util: res.cpuUtil,
      user: res.cpuPercentUser,
      system: res.cpuPercentSystem,
      iowait: res.cpuPercentIowait,
      irq: res.cpuPercentIrq,
      softirq: res.cpuPercentSwintr,
      peakUtil: res.peakCpuUtil,
      peakId: res.peakCpuId,
      method: res.cpuMethod,
      numCpus: res.numCpus,
    },
    remoteCpuMeasured,
    sdUnits,
    latency: i.latency,
  };
}

/** Mean of several rounds (-i): netperf reports the average of its iterations. */
export function averageFigures(rounds: Figures[]): Figures {
  if (rounds.length === 1) return rounds[0]!;
  const avg = (f: (x: Figures) => number) => rounds.reduce((s, r) => s + f(r), 0) / rounds.length;
  const last = rounds[rounds.length - 1]!;
  return {
    ...last,
    elapsed: Math.fround(avg((r) => r.elapsed)),
    thruput: avg((r) => r.thruput),
    localCpuUtil: Math.fround(avg((r) => r.localCpuUtil)),
    remoteCpuUtil: Math.fround(avg((r) => r.remoteCpuUtil)),
    localSd: Math.fround(avg((r) => r.localSd)),
    remoteSd: Math.fround(avg((r) => r.remoteSd)),
  };
}
