import { explainSocketError } from "../../src/errors.ts";
import type { UdpSocket } from "../../src/net/types.ts";
import { versionString } from "../../interop/iperf2/client-header.ts";
import { type UdpFlow, UdpServerSession } from "../../interop/iperf2/udp-server-session.ts";
import { connectionNotes, wallClockText, withInterface } from "./connection-notes.ts";
import type { ServerPlan } from "./plan.ts";
import { DEFAULT_UDP_RATE } from "./plan.ts";
import { defaultBuffers, setBuffers } from "../../src/host/socket-defaults.ts";
import type { Ids, ServerIo } from "./tcp-server.ts";
import { type Endpoint, connectionLine, serverBanner } from "./text-report.ts";
import { UdpReverseSender, wallSeconds } from "./udp-reverse-sender.ts";
import { busyMessage, checkTest, peerAllowed, policyLimits, serverPolicy, type ServerPolicy, type TestLimits } from "../../src/access/server-policy.ts";
import { RefusalLog } from "../../src/access/refusal-log.ts";
import { iperf2Ask } from "./tcp-server.ts";
import { iperf2Test } from "./iperf2-test.ts";
import { type Member, ReportGroup } from "./groups.ts";
import { PolledPlane, type PolledCounters } from "../../src/engine/polled-plane.ts";
import { StreamSpec } from "../../src/stream-spec.ts";
import type { UdpReceiverStats } from "../../interop/iperf2/udp-receiver-stats.ts";
import { SharedSocketTos } from "./udp-tos.ts";

interface FlowState {
  member: Member;
  group: ReportGroup;
  /** The flow's stream in its group's Test: /status, /metrics and every printed line read it through the Test. */
  plane: PolledPlane;
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
  private readonly groups: ReportGroup[] = [];
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
  private readonly tos: SharedSocketTos;

  constructor(
    private readonly plan: ServerPlan,
    private readonly io: ServerIo,
    private readonly ids: Ids,
    private readonly policy: ServerPolicy = serverPolicy(),
  ) {
    this.limits = policyLimits(policy);
    this.refusals = new RefusalLog((line) => io.warn(line));
    this.tos = new SharedSocketTos(io, () => this.sock?.fd);
  }

  async start(): Promise<void> {
    const { plan, io } = this;
    const host = plan.bind?.host ?? (plan.ipv6 ? "::" : "0.0.0.0");
    io.printer.info(...serverBanner({ port: plan.port, udp: true, buffer: plan.window === undefined ? defaultBuffers.udp() : setBuffers.recv(plan.window), requested: plan.window, enhanced: plan.enhanced, pid: process.pid, readLen: plan.len }));
    this.session = new UdpServerSession(
      { send: (bytes, to) => this.send(bytes, to) },
      { flow: (f) => this.onFlow(f), end: (f) => this.onEnd(f) },
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
    // Turns the kernel's stamping on, before the first datagram.
    this.arrival();
    warmFirstFlow();
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
    for (const g of this.groups) g.close();
    this.sock?.close();
    this.sock = undefined;
    this.finished();
  }

  private onDatagram(d: Uint8Array, from: Endpoint): void {
    const now = this.arrival();
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

  /**
   * When the datagram just read arrived: the kernel's stamp where it can give one. Bun's loop reaches a datagram
   * 13-30 µs after it came on loopback (and later under load), which the stock server's SO_TIMESTAMP leaves out of
   * its latency and jitter; the wall clock otherwise.
   */
  private arrival(): number {
    const fd = this.sock?.fd;
    return (fd !== undefined && fd >= 0 ? this.io.sockopt?.lastArrival(fd) : undefined) ?? wallSeconds();
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
    const joining = this.groups.some((g) => g.key === f.peer.host && g.accepting);
    const running = new Set([...this.live].map((x) => this.state.get(x)?.group)).size;
    return !joining && running >= max.value ? busyMessage(max, running) : undefined;
  }

  /** A datagram for the client at `to` (its report), under the TOS its header asked for. */
  private send(bytes: Uint8Array, to: Endpoint): void {
    this.tos.use(this.session.flowAt(to)?.request?.tos ?? 0);
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

  private groupFor(f: UdpFlow): ReportGroup {
    const host = f.peer.host;
    const open = this.groups.find((g) => g.key === host && g.accepting);
    if (open) return open;
    const r = f.request;
    const expected = r?.numThreads ?? 1;
    const durationS = r?.amount.kind === "time" ? r.amount.seconds : 0;
    const { format, csv, intervalS } = this.plan;
    const enhanced = this.plan.enhanced || r?.tripTimes === true;
    const test = iperf2Test({ role: "server", peer: f.peer, transport: "udp", durationS, intervalS }, expected);
    const g = new ReportGroup(host, expected, this.io.printer, { format, enhanced, csv, intervalS, test });
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
    // A --trip-times client's flows get enhanced lines with latency even without our -e, as from a stock server.
    const enhanced = plan.enhanced || r?.tripTimes === true;
    const notes = connectionNotes({
      isochronous: r?.isochronous,
      direction: reverse ? "reverse" : undefined,
      tripTimes: r?.tripTimes,
      noUdpFin: r !== null && (reverse || r.noUdpFin),
      enhanced,
      sock: this.sock?.fd,
      peerVersion: r && r.version.high !== 0 ? versionString(r.version) : undefined,
      at: reverse ? undefined : new Date(),
    });
    io.printer.info(connectionLine(id, withInterface(local, enhanced), f.peer, notes));
    // As a stock server sets it on the flow's socket when the flow opens.
    this.tos.use(r?.tos ?? 0);
    const group = this.groupFor(f);
    const sender = reverse && this.sock ? this.reverseSender(f) : undefined;
    const plane = sender
      ? this.plane(local, "udp-send", () => {
          const sent = sender.sent;
          return { bytes: sent.bytes, packets: sent.datagrams, frames: sent.frames, framesMissed: sent.framesMissed, slips: sent.slips };
        })
      : this.plane(local, "udp-recv", () => received(f.stats));
    // The flow's clock is the session's (its report to the client carries it too): from the first arrival, or from a
    // --trip-times client's own start.
    const began = f.stats.start;
    const startMs = performance.now() - (sender || began < 0 ? 0 : (wallSeconds() - began) * 1000);
    // -e: each datagram's transit is timed into the flow's stream, so every line reads its window's own latency.
    if (!sender) f.stats.onTransit = (s) => plane.time(0, s * 1e6);
    const member: Member = {
      id: String(id), numericId: id, stream: { plane, index: 0 }, transport: "udp", role: sender ? "send" : "recv", startMs, client: f.peer, server: local,
      timed: !sender && enhanced,
      // Stock prints an isochronous flow's frames where the client stamps its datagrams (--trip-times).
      frames: !sender && r?.tripTimes ? f.frames?.counts : undefined,
      isochronous: sender !== undefined && f.sendFrames !== undefined,
    };
    const st: FlowState = { member, group, plane };
    this.state.set(f, st);
    this.live.add(f);
    group.attach(plane, sender ? "send" : "recv", startMs);
    group.add(member, true);
    if (sender) this.reverse(f, st, sender);
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
    const sock = this.sock!;
    // Every datagram of the flow goes out under its TOS, whatever other flows share the socket.
    const out = { send: (b: Uint8Array, port: number, host: string) => (this.tos.use(r.tos), sock.send(b, port, host)), get closed() { return sock.closed; } };
    return new UdpReverseSender(out, f.peer, size, rate, r.amount, { frames: f.sendFrames, tripTimes: r.tripTimes });
  }

  private reverse(f: UdpFlow, st: FlowState, sender: UdpReverseSender): void {
    this.senders.add(sender);
    sender.start();
    void sender.done.then((res) => {
      this.senders.delete(sender);
      this.live.delete(f);
      this.state.delete(f);
      st.plane.end(0);
      st.group.ended(st.member, st.member.startMs + res.seconds * 1000);
      this.testDone();
    });
  }

  private onEnd(f: UdpFlow): void {
    const st = this.state.get(f);
    this.live.delete(f);
    if (!st) return;
    // Forgotten now: the FIN's answer lives in the session, the group keeps the flow's line and its [SUM].
    this.state.delete(f);
    st.plane.end(0, { reason: "marker" });
    st.group.ended(st.member, st.member.startMs + f.stats.duration * 1000);
    this.testDone();
  }

  /** A flow that never sent its FIN: report what arrived. */
  private vanished(f: UdpFlow): void {
    const st = this.state.get(f);
    this.state.delete(f);
    this.live.delete(f);
    if (!st || f.request?.direction === "reverse") return;
    st.plane.end(0, { reason: "idle" });
    st.group.ended(st.member, st.member.startMs + f.stats.duration * 1000);
  }

  private testDone(): void {
    this.tests++;
    if (this.plan.singleClient) this.stop();
  }
}

/**
 * What a flow's first datagram runs for the first time took 20-30 ms (the time zone formatter, the first parse of a
 * stream's schema): datagrams that came meanwhile were read together, each stamped with the last one's arrival
 * (11 ms late at 1 Mbit/s). Run once while the server waits for its first client.
 */
function warmFirstFlow(): void {
  wallClockText(new Date());
  StreamSpec.parse({ kind: "udp-recv", id: 0, listen: { host: "127.0.0.1", port: 0 }, format: "iperf2" });
}

/** What a receiving flow counted, in the counter table's terms (the FIN datagram included, as iperf 2 counts it). */
function received(s: UdpReceiverStats): PolledCounters {
  return { bytes: s.bytes, packets: s.packets, lost: s.lost, outOfOrder: s.outOfOrder, duplicates: s.duplicates, maxSeq: s.maxSeq, jitter: s.jitter };
}
