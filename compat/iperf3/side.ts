/**
 * What both ends of an iperf3 test keep while it runs: the report model, the process CPU window, and the pieces of
 * the JSON document, plus the helpers that print them. server.ts and client.ts drive it.
 */
import { hostname, machine, release, type, version } from "node:os";
import type { TestParams } from "../../interop/iperf3/params.ts";
import type { Results } from "../../interop/iperf3/results.ts";
import { processCpuPercent } from "../../src/formulas.ts";
import { jsonEnd, jsonInterval, jsonStart, type StartInfo } from "./json-report.ts";
import type { Entries } from "../../interop/iperf3/cjson.ts";
import type { Mode, ReportStream, ReportTest } from "./report-model.ts";
import { intervalBlock, summaryBlock } from "./text-report.ts";

export const IPERF_VERSION_STRING = "iperf 3.12";

/** uname-like string, as 3.12's system_info. */
export function systemInfo(): string {
  return `${type()} ${hostname()} ${release()} ${version()} ${machine()}`;
}

/** IPv4-mapped IPv6 addresses are printed as plain IPv4, as 3.12 does. */
export function plainAddress(a: string): string {
  return a.startsWith("::ffff:") && a.includes(".") ? a.slice(7) : a;
}

/** How a test names its peer on the status endpoint: host:port, IPv6 hosts in brackets. */
export function testRunPeer(peer: { host: string; port: number }): string {
  return peer.host.includes(":") ? `[${peer.host}]:${peer.port}` : `${peer.host}:${peer.port}`;
}

/** The params that say who sends on which stream. */
export type Directions = Pick<TestParams, "parallel" | "reverse" | "bidirectional">;

export function modeOf(p: Directions, role: "client" | "server"): Mode {
  if (p.bidirectional) return "bidir";
  const clientSends = !p.reverse;
  return clientSends === (role === "client") ? "sender" : "receiver";
}

/** Whether this side sends on stream number n (0-based, acceptance/creation order). */
export function sendsOn(p: Directions, role: "client" | "server", n: number): boolean {
  if (p.bidirectional) return role === "client" ? n < p.parallel : n >= p.parallel;
  return modeOf(p, role) === "sender";
}

/** iperf3 stream id of the n-th stream (1, 3, 4, ...). */
export function streamId(n: number): number {
  return n === 0 ? 1 : n + 2;
}

export function blankStream(id: number, socket: number, sender: boolean): ReportStream {
  return {
    id, socket, sender, localHost: "", localPort: 0, remoteHost: "", remotePort: 0, intervals: [], bytesSent: 0, bytesReceived: 0,
    packetCount: 0, peerPacketCount: 0, omittedPacketCount: 0, cntError: 0, omittedCntError: 0, outOfOrder: 0, omittedOutOfOrder: 0,
    jitterS: 0, retransmits: 0, maxSndCwnd: 0, maxSndWnd: 0, maxRttUs: 0, minRttUs: 0, meanRttUs: 0, endTimeS: 0, peerTimeS: 0,
  };
}

/** Process CPU between two points, as percentages of wall time (iperf3's cpu_util, all threads). */
export class CpuWindow {
  private wall0 = performance.now();
  private cpu0 = process.cpuUsage();
  result: [number, number, number] = [0, 0, 0];

  restart(): void {
    this.wall0 = performance.now();
    this.cpu0 = process.cpuUsage();
  }

  stop(): [number, number, number] {
    const wallS = (performance.now() - this.wall0) / 1000;
    const d = process.cpuUsage(this.cpu0);
    const user = processCpuPercent(d.user, 1e6, wallS);
    const system = processCpuPercent(d.system, 1e6, wallS);
    this.result = [user + system, user, system];
    return this.result;
  }
}

/** The report of one side plus its JSON parts, filled as the test goes. */
export class SideReport {
  readonly test: ReportTest;
  readonly jsonIntervals: Entries[] = [];
  /** Interval index already printed or turned into JSON. */
  private emitted = 0;

  constructor(
    role: "client" | "server",
    readonly params: TestParams,
    opts: { unitFormat: string; statsIntervalS: number; verbose: boolean; senderHasRetransmits: number },
    readonly start: StartInfo,
  ) {
    this.test = {
      role,
      protocol: params.protocol,
      mode: modeOf(params, role),
      numStreams: params.parallel,
      unitFormat: opts.unitFormat,
      statsIntervalS: opts.statsIntervalS,
      verbose: opts.verbose,
      senderHasRetransmits: opts.senderHasRetransmits,
      otherSideHasRetransmits: 0,
      streams: [],
      cpu: [0, 0, 0],
      remoteCpu: [0, 0, 0],
      getServerOutput: params.getServerOutput,
    };
  }

  /** Text and JSON for the intervals sampled since the last call. */
  drainIntervals(): { text: string; json: Entries[] } {
    let text = "";
    const json: Entries[] = [];
    const n = Math.max(0, ...this.test.streams.map((s) => s.intervals.length));
    for (; this.emitted < n; this.emitted++) {
      text += intervalBlock(this.test, this.emitted);
      const j = jsonInterval(this.test, this.emitted);
      if (j) {
        json.push(j);
        this.jsonIntervals.push(j);
      }
    }
    return { text, json };
  }

  /** The peer's results: remote CPU, its retransmit ability and congestion control (what get_results keeps). */
  applyPeer(peer: Results, role: "client" | "server"): void {
    const t = this.test;
    t.remoteCpu = [peer.cpuUtilTotal, peer.cpuUtilUser, peer.cpuUtilSystem];
    t.remoteCongestionUsed = peer.congestionUsed;
    if (t.mode === "receiver") {
      t.senderHasRetransmits = peer.senderHasRetransmits;
      t.otherSideHasRetransmits = 0;
    } else if (t.mode === "bidir") t.otherSideHasRetransmits = peer.senderHasRetransmits;
    if (role === "client") {
      t.serverOutputText = peer.serverOutputText;
      t.serverOutputJson = peer.serverOutputJson;
    }
  }

  summaryText(): string {
    return summaryBlock(this.test);
  }

  jsonEnd(): Entries {
    return jsonEnd(this.test);
  }

  jsonStart(): Entries {
    return jsonStart(this.start);
  }
}
