import { explainSocketError } from "../../src/errors.ts";
import { packetsPerSecond } from "../../src/formulas.ts";
import type { UdpSocket } from "../../src/net/types.ts";
import { versionString } from "../../interop/iperf2/client-header.ts";
import type { ServerReport } from "../../interop/iperf2/server-report.ts";
import { type UdpFlow, UdpServerSession } from "../../interop/iperf2/udp-server-session.ts";
import { connectionNotes, withInterface } from "./connection-notes.ts";
import { csvUdpLine, finalCsvTime } from "./csv-report.ts";
import type { ServerPlan } from "./plan.ts";
import { DEFAULT_UDP_RATE } from "./plan.ts";
import { defaultBuffers, setBuffers } from "../../src/host/socket-defaults.ts";
import type { Ids, ServerIo } from "./tcp-server.ts";
import {
  type Endpoint,
  HEADER_BW,
  HEADER_UDP,
  HEADER_UDP_ENHANCED,
  bwLine,
  connectionLine,
  sentLine,
  serverBanner,
  udpEnhancedLine,
  udpLine,
  udpSumLine,
} from "./text-report.ts";
import { UdpReverseSender, wallSeconds } from "./udp-reverse-sender.ts";
import { busyMessage, checkTest, peerAllowed, policyLimits, serverPolicy, type ServerPolicy, type TestLimits } from "../../src/access/server-policy.ts";
import { RefusalLog } from "../../src/access/refusal-log.ts";
import { iperf2Ask } from "./tcp-server.ts";
import { LiveTest } from "./live-test.ts";
import { PolledPlane, type PolledCounters } from "../../src/engine/polled-plane.ts";
import { StreamSpec } from "../../src/stream-spec.ts";
import type { UdpReceiverStats } from "../../interop/iperf2/udp-receiver-stats.ts";

interface FlowState {
  id: number;
  local: Endpoint;
  /** Interval bookkeeping (-i): the cumulative figures at the last line. */
  last: { bytes: number; datagrams: number; lost: number };
  tick: number;
  timer?: ReturnType<typeof setInterval>;
  group: UdpGroup;
  /** The flow's stream in its group's Test: /status, /metrics and the -i lines read it through the Test's cuts. */
  plane: PolledPlane;
}

/** The flows of one client invocation (-P N gives N flows), for the server's UDP [SUM] line. */
interface UdpGroup {
  host: string;
  expected: number;
  flows: UdpFlow[];
  ended: number;
  /** The client invocation as the engine's Test (its flows are its streams), as the TCP server's report groups are. */
  live: LiveTest;
}

const LOOPBACK = /^(127\.|::1$|::ffff:127\.)/;

/** Refused sources remembered at once (a spoofed flood must not grow the map without bound). */
const MAX_REFUSED = 4096;
/** A refused source silent this long is forgotten (its port may be a new client's later). */
const REFUSED_FORGET_S = 30;

/**
 * `anyperf iperf -s -u`: one UDP socket, any number of client flows (UdpServerSession keys them by source address and
 * port), each FIN answered with the 128-byte report, -R flows answered with a paced stream from this same socket.
 * This runs on the main thread: see the report to the lead for the engine feature that would move it into a Worker.
 */
export class UdpServer {
  private sock: UdpSocket | undefined;
  private session!: UdpServerSession;
  private readonly state = new Map<UdpFlow, FlowState>();
  private readonly groups: UdpGroup[] = [];
  private readonly senders = new Set<UdpReverseSender>();
  private sweeper: ReturnType<typeof setInterval> | undefined;
  private finished!: () => void;
  private tests = 0;
  readonly done = new Promise<void>((r) => (this.finished = r));
  private readonly limits: TestLimits;
  private readonly refusals: RefusalLog;
  /**
   * Sources refused (outside --allow, or over a limit) -> when last heard: their datagrams are dropped before the
   * session sees them. UDP has no way to say no; a stock client ends with its "did not receive ack" warning.
   */
  private readonly refused = new Map<string, number>();
  /** Flows still receiving (or sending, -R), for --max-tests. */
  private readonly live = new Set<UdpFlow>();

  constructor(
    private readonly plan: ServerPlan,
    private readonly io: ServerIo,
    private readonly ids: Ids,
    private readonly policy: ServerPolicy = serverPolicy(),
  ) {
    this.limits = policyLimits(policy);
    this.refusals = new RefusalLog((line) => io.warn(line));
  }

  async start(): Promise<void> {
    const { plan, io } = this;
    const host = plan.bind?.host ?? (plan.ipv6 ? "::" : "0.0.0.0");
    io.printer.info(...serverBanner({ port: plan.port, udp: true, buffer: plan.window === undefined ? defaultBuffers.udp() : setBuffers.recv(plan.window), requested: plan.window, enhanced: plan.enhanced, pid: process.pid, readLen: plan.len }));
    this.session = new UdpServerSession(
      { send: (bytes, to) => this.send(bytes, to) },
      { flow: (f) => this.onFlow(f), end: (f, r) => this.onEnd(f, r) },
      { enhanced: plan.enhanced },
    );
    try {
      this.sock = await io.net.udpSocket({
        hostname: host,
        port: plan.port,
        socket: { data: (_s, d, port, address) => this.onDatagram(d, { host: address, port }), error: () => {} },
      });
    } catch (e) {
      throw explainSocketError(e, { host, port: plan.port, role: "listen" });
    }
    this.sweeper = setInterval(() => {
      const now = wallSeconds();
      for (const f of this.session.expire(now)) this.vanished(f);
      for (const [key, at] of this.refused) if (now - at > REFUSED_FORGET_S) this.refused.delete(key);
    }, 5000);
    io.signal.addEventListener("abort", () => this.stop(), { once: true });
  }

  stop(): void {
    for (const s of this.senders) s.stop();
    if (this.sweeper) clearInterval(this.sweeper);
    for (const st of this.state.values()) if (st.timer) clearInterval(st.timer);
    for (const g of this.groups) g.live.end();
    this.sock?.close();
    this.sock = undefined;
    this.finished();
  }

  private onDatagram(d: Uint8Array, from: Endpoint): void {
    const now = wallSeconds();
    const key = `${from.host}|${from.port}`;
    if (this.refused.has(key)) {
      this.refused.set(key, now);
      return;
    }
    if (!peerAllowed(from.host, this.policy)) {
      this.refuse(key, now, `refused ${from.host} port ${from.port}: not in --allow`);
      return;
    }
    this.session.onDatagram(d, from, now);
  }

  private refuse(key: string, now: number, line: string): void {
    if (this.refused.size >= MAX_REFUSED) this.refused.delete(this.refused.keys().next().value!);
    this.refused.set(key, now);
    this.refusals.refused(line);
  }

  /** Why a new flow's test is refused, or undefined. A flow joining its client's -P group is no new test. */
  private refusal(f: UdpFlow): string | undefined {
    const no = checkTest(this.limits, iperf2Ask(f.request));
    if (no) return no.message;
    const max = this.limits.maxTests;
    if (!max) return undefined;
    const joining = this.groups.some((g) => g.host === f.peer.host && g.flows.length < g.expected);
    const running = new Set([...this.live].map((x) => this.state.get(x)?.group)).size;
    return !joining && running >= max.value ? busyMessage(max, running) : undefined;
  }

  private send(bytes: Uint8Array, to: Endpoint): void {
    try {
      this.sock?.send(bytes, to.port, to.host);
    } catch {
      // the client is gone; it will not read the report anyway
    }
  }

  private localFor(peer: Endpoint): Endpoint {
    const bound = this.plan.bind?.host;
    // Without IP_PKTINFO an unbound socket does not know which address a datagram came to; on loopback it is that.
    const host = bound && bound !== "0.0.0.0" && bound !== "::" ? bound : LOOPBACK.test(peer.host) ? peer.host : "0.0.0.0";
    return { host, port: this.sock?.port ?? this.plan.port };
  }

  private groupFor(f: UdpFlow): UdpGroup {
    const host = f.peer.host;
    const open = this.groups.find((g) => g.host === host && g.flows.length < g.expected);
    if (open) return open;
    const r = f.request;
    const expected = r?.numThreads ?? 1;
    const durationS = r?.amount.kind === "time" ? r.amount.seconds : 0;
    const live = new LiveTest({ role: "server", peer: f.peer, transport: "udp", durationS, intervalS: this.plan.intervalS }, expected);
    const g: UdpGroup = { host, expected, flows: [], ended: 0, live };
    this.groups.push(g);
    if (this.groups.length > 256) this.groups.shift();
    return g;
  }

  private onFlow(f: UdpFlow): void {
    const { plan, io } = this;
    const no = this.refusal(f);
    if (no) {
      this.refuse(`${f.peer.host}|${f.peer.port}`, wallSeconds(), `refused test from ${f.peer.host} port ${f.peer.port}: ${no}`);
      return;
    }
    const id = this.ids.next();
    const r = f.request;
    const local = this.localFor(f.peer);
    const reverse = r?.direction === "reverse";
    const notes = connectionNotes({
      direction: reverse ? "reverse" : undefined,
      noUdpFin: r !== null && (reverse || r.noUdpFin),
      enhanced: plan.enhanced,
      sock: this.sock?.fd,
      peerVersion: r && r.version.high !== 0 ? versionString(r.version) : undefined,
      at: reverse ? undefined : new Date(),
    });
    io.printer.info(connectionLine(id, withInterface(local, plan.enhanced), f.peer, notes));
    const group = this.groupFor(f);
    group.flows.push(f);
    if (reverse && this.sock) {
      const sender = this.reverseSender(f);
      const plane = this.plane(local, "udp-send", () => ({ bytes: sender.sent.bytes, packets: sender.sent.datagrams }));
      const st: FlowState = { id, local, last: { bytes: 0, datagrams: 0, lost: 0 }, tick: 0, group, plane };
      this.state.set(f, st);
      this.live.add(f);
      group.live.attach(plane, "send", performance.now());
      this.reverse(f, st, sender);
      return;
    }
    const plane = this.plane(local, "udp-recv", () => received(f.stats));
    const st: FlowState = { id, local, last: { bytes: 0, datagrams: 0, lost: 0 }, tick: 0, group, plane };
    this.state.set(f, st);
    this.live.add(f);
    group.live.attach(plane, "recv", performance.now());
    if (plan.intervalS > 0) st.timer = setInterval(() => this.interval(f, st), plan.intervalS * 1000);
  }

  /** A flow's one stream, counted here: this socket carries every client's flows, so no Worker can own it. */
  private plane(local: Endpoint, kind: "udp-recv" | "udp-send", read: () => PolledCounters): PolledPlane {
    const spec = kind === "udp-recv" ? { kind, id: 0, listen: local, format: "iperf2" as const } : { kind, id: 0, connect: local, format: "iperf2" as const };
    return new PolledPlane([StreamSpec.parse(spec)], read);
  }

  private reverseSender(f: UdpFlow): UdpReverseSender {
    const r = f.request!;
    const size = r.bufLen > 0 ? r.bufLen : 1470;
    const rate = r.rate > 0 ? { value: r.rate, units: r.rateUnits } : { value: DEFAULT_UDP_RATE, units: "bps" as const };
    return new UdpReverseSender(this.sock!, f.peer, size, rate, r.amount);
  }

  private reverse(f: UdpFlow, st: FlowState, sender: UdpReverseSender): void {
    this.senders.add(sender);
    sender.start();
    void sender.done.then((res) => {
      this.senders.delete(sender);
      this.live.delete(f);
      this.streamEnded(st);
      this.state.delete(f);
      if (this.plan.csv) return;
      this.io.printer.report(HEADER_BW, bwLine({ id: st.id, start: 0, end: res.seconds, bytes: res.bytes }, this.plan.format));
      // Stock counts two more than it sent data datagrams (as its UDP client does): 91 data + FIN print "Sent 93".
      this.io.printer.report(null, sentLine(st.id, res.datagrams + 2));
      this.testDone();
    });
  }

  private interval(f: UdpFlow, st: FlowState): void {
    const s = LiveTest.of(st.group.live.cut(), st.plane).streams[0]!;
    const start = st.tick * this.plan.intervalS;
    const end = start + this.plan.intervalS;
    st.tick++;
    const bytes = s.bytes - st.last.bytes;
    const total = s.maxSeq - st.last.datagrams;
    const lost = s.lost - st.last.lost;
    st.last = { bytes: s.bytes, datagrams: s.maxSeq, lost: s.lost };
    this.line(f, st, { start, end, bytes, jitterS: s.jitter, lost, total }, new Date(), s.packets);
  }

  private line(f: UdpFlow, st: FlowState, x: { start: number; end: number; bytes: number; jitterS: number; lost: number; total: number }, at: Date | null, packets: number): void {
    if (this.plan.csv) {
      this.io.printer.csvLine(csvUdpLine({ at, client: f.peer, server: st.local, id: st.id, ...x, outOfOrder: f.stats.outOfOrder, millis: this.plan.enhanced }));
      return;
    }
    const fig = { id: st.id, ...x };
    if (this.plan.enhanced) {
      const l = f.stats.latency();
      const stdev = l.transitCount > 1 ? Math.sqrt(l.m2Transit / (l.transitCount - 1)) / 1e6 : 0;
      const seconds = x.end - x.start;
      this.io.printer.report(HEADER_UDP_ENHANCED, udpEnhancedLine(fig, { meanS: l.meanTransit, minS: l.minTransit, maxS: l.maxTransit, stdevS: stdev, pps: packetsPerSecond(packets, seconds) }, packets, this.plan.format));
    } else {
      this.io.printer.report(HEADER_UDP, udpLine(fig, this.plan.format));
    }
  }

  private onEnd(f: UdpFlow, report: ServerReport): void {
    const st = this.state.get(f);
    this.live.delete(f);
    if (!st) return;
    if (st.timer) clearInterval(st.timer);
    this.streamEnded(st, "marker");
    // Forgotten now: the FIN's answer lives in the session, the group keeps the figures of its [SUM] line.
    this.state.delete(f);
    this.line(f, st, { start: 0, end: report.duration, bytes: report.totalBytes, jitterS: report.jitter, lost: report.lost, total: report.datagrams }, finalCsvTime(this.plan.intervalS), f.stats.packets);
    this.groupEnded(st.group);
    this.testDone();
  }

  /** A flow that never sent its FIN: report what arrived. */
  private vanished(f: UdpFlow): void {
    const st = this.state.get(f);
    this.state.delete(f);
    this.live.delete(f);
    if (!st || f.request?.direction === "reverse") return;
    if (st.timer) clearInterval(st.timer);
    this.streamEnded(st, "idle");
    const s = f.stats;
    this.line(f, st, { start: 0, end: s.duration, bytes: s.bytes, jitterS: s.jitter, lost: s.lost, total: s.datagrams }, new Date(), s.packets);
    this.groupEnded(st.group);
  }

  /** The Test's window closes with the last flow that joined (a -P client whose other flows never came ends too). */
  private streamEnded(st: FlowState, reason: "marker" | "idle" | "stopped" = "stopped"): void {
    st.plane.end(0, { reason });
    const g = st.group;
    // A flow without state has ended already (and was forgotten).
    if (g.flows.every((f) => (this.state.get(f)?.plane.ends[0] ?? "gone") !== undefined)) g.live.end();
  }

  private groupEnded(g: UdpGroup): void {
    g.ended++;
    if (g.ended < g.expected || g.flows.length < 2 || this.plan.csv) return;
    const reports = g.flows.map((x) => x.stats);
    const bytes = reports.reduce((n, s) => n + s.bytes, 0);
    const lost = reports.reduce((n, s) => n + s.lost, 0);
    const total = reports.reduce((n, s) => n + s.datagrams, 0);
    const end = Math.max(...reports.map((s) => s.duration));
    this.io.printer.report(HEADER_BW, udpSumLine({ id: "SUM", start: 0, end, bytes, lost, total }, this.plan.format));
  }

  private testDone(): void {
    this.tests++;
    if (this.plan.singleClient) this.stop();
  }
}

/** What a receiving flow counted, in the counter table's terms (the FIN datagram included, as iperf 2 counts it). */
function received(s: UdpReceiverStats): PolledCounters {
  return { bytes: s.bytes, packets: s.packets, lost: s.lost, outOfOrder: s.outOfOrder, duplicates: s.duplicates, maxSeq: s.maxSeq, jitter: s.jitter };
}
