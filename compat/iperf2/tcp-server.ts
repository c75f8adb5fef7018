import { DataPlane } from "../../src/engine/data-plane.ts";
import { explainSocketError } from "../../src/errors.ts";
import type { Net, TcpListener, TcpSocket } from "../../src/net/types.ts";
import type { Sockopt } from "../../src/sockopt/sockopt.ts";
import type { HandOff } from "../../src/net/hand-off.ts";
import type { SocketOptions, StreamSpecInput, TcpSendSpecInput } from "../../src/stream-spec.ts";
import { type ClientHeader, encodeClientHeader, versionString } from "../../interop/iperf2/client-header.ts";
import { TCP_BURST_HEADER, TCP_BURST_STAMPS, tcpBurstTemplate } from "../../interop/iperf2/tcp-burst.ts";
import type { IsochSettings } from "../../interop/iperf2/isoch-frames.ts";
import { wallSeconds } from "./udp-reverse-sender.ts";
import { strerror } from "../../src/sockopt/errno.ts";
import { digitsPayload, timeval } from "../../interop/iperf2/datagram.ts";
import { type ServerSend, type TcpServerTest, TcpServerSession } from "../../interop/iperf2/tcp-server-session.ts";
import { type Member, ReportGroup } from "./groups.ts";
import { iperf2Test } from "./iperf2-test.ts";
import type { ServerPlan } from "./plan.ts";
import type { Printer } from "./printer.ts";
import { type Queued, SocketTransport, flushQueued, newQueued } from "../../src/net/write-queue.ts";
import { defaultBuffers, setBuffers } from "../../src/host/socket-defaults.ts";
import { connectionNotes, withInterface } from "./connection-notes.ts";
import { connectMain, handToWorker, initialTcp, openOnHanded } from "./tcp-connect.ts";
import type { TcpInit } from "./tcp-stats.ts";
import { busyMessage, checkTest, peerAllowed, policyLimits, serverPolicy, type ServerPolicy, type TestLimits } from "../../src/access/server-policy.ts";
import { RefusalLog } from "../../src/access/refusal-log.ts";
import type { ClientRequest } from "../../interop/iperf2/client-request.ts";
import { type Endpoint, clientBanner, connectionLine, serverBanner } from "./text-report.ts";
import { writeFrameHead } from "../../src/engine/frame-head.ts";
import { timerDelay } from "../../src/timer-delay.ts";
import { type BouncebackConn, serveBounceback } from "./bounceback-server.ts";
import { applyAsked } from "./apply-asked.ts";

/** How long an accepted connection may take to show its header before we drop it. */
const HEADER_DEADLINE_MS = 10_000;
/** A receiving stream with no byte for this long is ended (a vanished client must not hold its Worker slot). */
const IDLE_MS = 60_000;
/**
 * Largest write we make for a client's -R / -d / -r / --full-duplex traffic. The header's length word is the
 * client's -l; honouring any 31-bit value would let one bad header allocate gigabytes. Larger -l values only change
 * how the same bytes are cut into writes.
 */
const MAX_SERVER_WRITE = 1 << 20;

export interface ServerIo {
  net: Net;
  /** Socket options and readings; undefined where hand-off is local (HandOff.sockopt). */
  sockopt: Sockopt | undefined;
  handOff: HandOff;
  printer: Printer;
  signal: AbortSignal;
  warn(text: string): void;
}

interface Conn extends Queued, BouncebackConn {
  session?: TcpServerSession;
  timer?: ReturnType<typeof setTimeout>;
  handed: boolean;
  acceptedMs: number;
  /** Read at accept: a peer that closes at once must still have a name in the lines printed about it. */
  peer: Endpoint;
  local: Endpoint;
  init?: TcpInit;
  at: Date;
}

const unaccepted = (): Conn => ({ ...newQueued(), handed: false, acceptedMs: 0, peer: { host: "?", port: 0 }, local: { host: "?", port: 0 }, at: new Date(0) });

/** What an iperf 2 header asks of the server, in the terms the limits use (a headerless -C client asks nothing). */
export function iperf2Ask(r: ClientRequest | null): { streams?: number; durationS?: number; rateBps?: number } {
  if (!r) return {};
  return {
    streams: r.numThreads,
    durationS: r.amount.kind === "time" ? r.amount.seconds : undefined,
    rateBps: r.rate > 0 && r.rateUnits === "bps" ? r.rate * r.numThreads : undefined,
  };
}

/** Seconds a client may overrun --max-duration before its connection is closed (its own timer ends it first). */
export const DURATION_GRACE_S = 2;

/** The next transfer id; stock servers number every connection they accept or open, 1, 2, 3, ... */
export class Ids {
  private n = 0;
  next(): number {
    return ++this.n;
  }
}

/**
 * What we send a client: a stream (digits), or for --trip-times and --isochronous what stock 2.1.8 and 2.2.1 servers
 * send, acting as that client [wire: both, captured]: with --trip-times a header first (`bursts.header`: the
 * client's own, our start at 64, written by the caller), which the client reads before any data (a 2.2.1 client took
 * our digits for one 1.5 GB burst); then bursts that open with the 92-byte burst header, stamped as they go, over
 * the header's bytes or, without one, the digits; frames each at its slot.
 */
function sendSpec(send: ServerSend, readOptions: SocketOptions = {}, bursts?: ReverseBursts): Omit<Extract<StreamSpecInput, { kind: "tcp-send" }>, "kind" | "id"> {
  const frames = send.frames;
  const rate = send.rate > 0 && !frames ? (send.rateUnits === "pps" ? { packetsPerSecond: send.rate } : { bitsPerSecond: send.rate }) : {};
  const size = Math.min(Math.max(send.writeSize, bursts ? TCP_BURST_HEADER.headerBytes : 1), MAX_SERVER_WRITE);
  const digits = digitsPayload(size);
  const withHeader = bursts && send.tripTimes;
  return {
    ...(bursts
      ? {
          payload: tcpBurstTemplate(withHeader ? bursts.header : digits, digits, bursts.start, frames ? Math.floor(1e6 / frames.perSecond) : 0),
          stampWrites: frames ? { ...TCP_BURST_STAMPS, sizeAt: TCP_BURST_HEADER.sizeAt } : TCP_BURST_STAMPS,
          ...(frames ? { frames: isochFrames(send, frames) } : {}),
        }
      : { payload: digits }),
    writeSize: size,
    rate,
    limitBytes: send.amount.kind === "bytes" ? send.amount.bytes : 0,
    end: "fin-wait-eof",
    // Stock servers pace what they send with the client's --fq-rate (SO_MAX_PACING_RATE), -R and -d alike; 2.2.1's
    // sets a -R / --full-duplex client's --tcp-write-prefetch as TCP_NOTSENT_LOWAT.
    options: { ...readOptions, ...(send.fqRate ? { pacingRate: send.fqRate } : {}), ...(send.writePrefetch ? { notSentLowat: send.writePrefetch } : {}) },
  };
}

/** Where a TCP header carries its start time (sec, usec): 64 from 2.1.8 and 2.2.1 (docs/protocols/iperf2.md §2.2.1). */
const HEADER_START_AT = 64;

interface ReverseBursts {
  header: Uint8Array<ArrayBuffer>;
  start: { sec: number; usec: number };
}

/** The client's own header with our start in it, and that start, for the bursts we send it. */
function reverseBursts(h: ClientHeader): ReverseBursts {
  const header = encodeClientHeader(h, "tcp");
  const start = timeval(wallSeconds());
  if (header.length >= HEADER_START_AT + 8) {
    const v = new DataView(header.buffer);
    v.setUint32(HEADER_START_AT, start.sec);
    v.setUint32(HEADER_START_AT + 4, start.usec);
  }
  return { header, start };
}

function isochFrames(send: ServerSend, f: IsochSettings): TcpSendSpecInput["frames"] {
  const seconds = send.amount.kind === "time" ? send.amount.seconds : undefined;
  return { perSecond: f.perSecond, meanBps: f.meanBps, stddevBps: f.stddevBps, minBytes: TCP_BURST_HEADER.headerBytes, seconds };
}

/**
 * `anyperf iperf -s` for TCP: accepts any number of connections at once; each one's header is read on the main
 * thread by TcpServerSession, then the socket is handed to a Worker (dup + adopt) for the data, and the -R / -d /
 * -r / --full-duplex traffic back to the client runs in Workers too.
 */
export class TcpServer {
  private listener: TcpListener | undefined;
  private readonly groups: ReportGroup[] = [];
  private readonly planes = new Set<DataPlane>();
  private tests = 0;
  private finished!: () => void;
  /** Resolves when the server should exit (-1 after its one client, or interrupted). */
  readonly done = new Promise<void>((r) => (this.finished = r));
  private readonly limits: TestLimits;
  private readonly refusals: RefusalLog;
  /** Live connections per report group: a group with any is a running test (--max-tests). */
  private readonly liveConnections = new Map<ReportGroup, number>();

  constructor(
    private readonly plan: ServerPlan,
    private readonly io: ServerIo,
    private readonly ids: Ids,
    private readonly policy: ServerPolicy = serverPolicy(),
  ) {
    this.limits = policyLimits(policy);
    this.refusals = new RefusalLog((line) => io.warn(line));
  }

  start(): void {
    const { plan, io } = this;
    const host = plan.bind?.host ?? (plan.ipv6 ? "::" : "0.0.0.0");
    io.printer.info(
      ...serverBanner({ port: plan.port, udp: false, buffer: plan.window === undefined ? defaultBuffers.tcpRecv() : setBuffers.recv(plan.window), requested: plan.window, enhanced: plan.enhanced, pid: process.pid, readLen: plan.len }),
    );
    try {
      this.listener = io.net.listen<Conn>({
        hostname: host,
        port: plan.port,
        data: unaccepted(),
        socket: {
          open: (s) => this.accept(s),
          data: (s, d) => (s.data.bounceback ?? s.data.session)?.onData(d),
          drain: (s) => flushQueued(s),
          end: (s) => this.eof(s),
          close: (s) => this.eof(s),
          error: () => {},
        },
      });
    } catch (e) {
      throw explainSocketError(e, { host, port: plan.port, role: "listen" });
    }
    io.signal.addEventListener("abort", () => void this.stop(), { once: true });
  }

  async stop(): Promise<void> {
    this.listener?.stop(true);
    this.listener = undefined;
    await Promise.all([...this.planes].map((p) => p.stop()));
    for (const g of this.groups) g.close();
    this.finished();
  }

  private accept(s: TcpSocket<Conn>): void {
    const peer = { host: s.remoteAddress ?? "?", port: s.remotePort ?? 0 };
    // Outside --allow: closed before a byte is read.
    if (!peerAllowed(s.remoteAddress, this.policy)) {
      s.data = { ...unaccepted(), handed: true };
      this.refusals.refused(`refused ${peer.host} port ${peer.port}: not in --allow`);
      s.end();
      return;
    }
    s.data = { ...unaccepted(), acceptedMs: performance.now(), peer, local: this.local(s), init: initialTcp(this.io.sockopt, s), at: new Date() };
    const session = new TcpServerSession(new SocketTransport(s), {
      test: (t) => {
        clearTimeout(s.data.timer);
        void this.run(s, t).catch((e: unknown) => this.io.warn(`test from ${peer.host} port ${peer.port}: ${e instanceof Error ? e.message : String(e)}`));
      },
      end: () => {},
      error: (e) => {
        clearTimeout(s.data.timer);
        this.io.warn(`dropped connection from ${peer.host} port ${peer.port}: ${e.message}`);
      },
    });
    s.data.session = session;
    s.data.timer = setTimeout(() => session.expire(), HEADER_DEADLINE_MS);
  }

  private eof(s: TcpSocket<Conn>): void {
    if (!s.data || s.data.handed) return;
    clearTimeout(s.data.timer);
    if (s.data.bounceback) s.data.bounceback.onEof();
    else s.data.session?.onEof();
  }

  private local(s: TcpSocket<Conn>): Endpoint {
    const fd = s.fd;
    let host: string | undefined;
    try {
      host = fd !== undefined ? this.io.sockopt?.localAddress(fd)?.host : undefined;
    } catch {
      // closed already: the bound address stands in
    }
    return { host: host ?? s.localAddress?.replace(/^::ffff:/, "") ?? this.plan.bind?.host ?? "0.0.0.0", port: s.localPort ?? this.plan.port };
  }

  /** `peer` and `planes` (forward streams, plus -d connect-backs) describe the test for the status endpoint. */
  private group(host: string, expected: number, peer: Endpoint, planes: number, durationS: number): ReportGroup {
    const open = this.groups.find((g) => g.key === host && g.accepting);
    if (open) return open;
    const g = new ReportGroup(host, expected, this.io.printer, {
      format: this.plan.format,
      enhanced: this.plan.enhanced,
      csv: this.plan.csv,
      intervalS: this.plan.intervalS,
      test: iperf2Test({ role: "server", peer, transport: "tcp", durationS, intervalS: this.plan.intervalS }, planes),
    });
    this.groups.push(g);
    // Finished groups are dropped so a long-running server does not grow.
    if (this.groups.length > 256) this.groups.splice(0, this.groups.findIndex((x) => !x.accepting) + 1);
    return g;
  }

  private async run(s: TcpSocket<Conn>, t: TcpServerTest): Promise<void> {
    const { io, plan } = this;
    const id = this.ids.next();
    // Read before the hand-off: on the local path the stream then owns the socket's `data`.
    const { peer, local, init, at, acceptedMs } = s.data;
    const r = t.request;
    // --txstart-time: the stream's clock starts when the client starts sending, as stock's (the wait is no interval).
    const startMs = r?.startTime ? Math.max(acceptedMs, r.startTime.sec * 1000 + r.startTime.usec / 1000 - performance.timeOrigin) : acceptedMs;
    const idleTimeoutMs = IDLE_MS + Math.max(0, startMs - performance.now());
    const refusal = this.refusal(peer, r);
    if (refusal) {
      // iperf 2 has no way to say no: the connection is closed before any report, and our log says why.
      s.data.handed = true;
      s.data.session?.handOff();
      this.refusals.refused(`refused test from ${peer.host} port ${peer.port}: ${refusal}`);
      s.terminate();
      return;
    }
    // A --trip-times client's test is reported with its latency whatever our -e says, as a stock server does.
    const enhanced = plan.enhanced || r?.tripTimes === true;
    const line = (sock: number | undefined) => {
      const notes = connectionNotes({
        isochronous: r?.isochronous,
        direction: r?.direction === "forward" ? undefined : r?.direction,
        epochStart: r?.startTime !== undefined,
        tripTimes: r?.tripTimes,
        enhanced,
        sock,
        peerVersion: r && r.version.high !== 0 ? versionString(r.version) : undefined,
        quickAck: r?.tcpQuickAck,
        init,
        at: r?.direction === "reverse" ? undefined : at,
      });
      io.printer.info(connectionLine(id, withInterface(local, enhanced), peer, notes));
    };
    if (t.bounceback) {
      s.data.session?.handOff();
      // The header names no duration: --max-duration bounds a bounceback test by the limit and its grace.
      const max = this.limits.maxDurationS;
      const cap = max
        ? setTimeout(() => {
            io.warn(`ended test from ${peer.host} port ${peer.port} after ${max.value + DURATION_GRACE_S} s: this server allows ${max.value} s (${max.flag})`);
            served.stop(DURATION_GRACE_S * 1000);
          }, (max.value + DURATION_GRACE_S) * 1000)
        : undefined;
      const served = serveBounceback(s, t.pending, plan, io, {
        id,
        startMs,
        client: peer,
        server: local,
        line: (extra) => io.printer.info(connectionLine(id, withInterface(local, plan.enhanced), peer, [...extra, ...connectionNotes({ enhanced: plan.enhanced, sock: s.fd, init, at })])),
        done: () => {
          clearTimeout(cap);
          this.tests++;
          if (plan.singleClient && this.tests >= 1) void this.stop();
        },
      });
      return;
    }
    if (r?.congestion) applyAsked(io, s.fd, { congestion: r.congestion }, `'${r.congestion}' congestion control`);
    // Stock servers set the extended header's TOS (the client's -S) on the accepted socket, whichever way it sends.
    if (r?.tos) applyAsked(io, s.fd, { tos: r.tos }, `TOS 0x${r.tos.toString(16)}`);
    // A 2.2.1 client gives up when the header it waits for (--trip-times) takes two frame periods or its -i / 2 (33 ms
    // at 60 frames/s): written here, at once, not after the hand-off to a Worker (25 ms on a cold server, more loaded).
    const bursts = t.sendHere?.bursts && t.header ? reverseBursts(t.header) : undefined;
    if (bursts && t.sendHere?.tripTimes) s.write(bursts.header);
    const fullDuplex = r?.direction === "full-duplex";
    const receives = r?.direction !== "reverse";
    const send = t.sendHere;
    // As the stock servers, TCP_QUICKACK before each read of what the client sends (forward and --full-duplex).
    const quickAck = r?.tcpQuickAck ? { quickAck: true } : {};
    const sending = send ? sendSpec(send, quickAck, bursts) : undefined;
    // Without --trip-times the first frame's own bytes are what that client waits for: its head goes out here too.
    const head = sending?.frames && sending.payload ? writeFrameHead({ payload: sending.payload, frames: sending.frames, stampWrites: sending.stampWrites }, (b) => s.write(b)) : undefined;
    // From here the socket belongs to the stream. --full-duplex runs on one stream that sends and counts what it reads:
    // two Workers reading dups of one fd would split the incoming bytes between them.
    s.data.handed = true;
    s.data.session?.handOff();
    const handed = handToWorker(io.handOff, s as TcpSocket<unknown>, plan.enhanced && t.sendHere !== null);
    const fd = handed.fd;
    // "(sock=N)" names the descriptor the Worker keeps: Bun's own is closed by the hand-off and soon reused.
    line(fd);
    const spec: StreamSpecInput = sending
      ? { kind: "tcp-send", id: 0, adopt: { ...handed.adopt, pending: fullDuplex ? t.received : 0 }, ...sending, ...head, countReceived: fullDuplex, idleTimeoutMs }
      : {
          kind: "tcp-recv",
          id: 0,
          options: quickAck,
          adopt: { ...handed.adopt, pending: t.received },
          endOnEof: true,
          idleTimeoutMs,
          connections: 1,
          // The Worker times the client's stamped bursts as it reads them, from the first byte past the header.
          bursts: r?.tripTimes ? { ...TCP_BURST_HEADER, lead: new Uint8Array(t.pending) } : undefined,
        };
    // The stream starts in its Worker as it opens; the report group is made meanwhile (a few ms on a cold server):
    // a 2.2.1 client's first read of what we send waits two frame periods (-R --isochronous: 33 ms at 60 frames/s).
    const goMs = performance.now();
    const plane = await openOnHanded(handed, spec, { go: true });
    const threads = r?.numThreads ?? 1;
    const seconds = r?.amount.kind === "time" ? r.amount.seconds : 0;
    const group = this.group(peer.host, threads, peer, t.connectBack?.when === "now" ? 2 * threads : threads, seconds);
    this.planes.add(plane);
    this.liveConnections.set(group, (this.liveConnections.get(group) ?? 0) + 1);
    void plane.ended.then(() => {
      const n = (this.liveConnections.get(group) ?? 1) - 1;
      if (n > 0) this.liveConnections.set(group, n);
      else this.liveConnections.delete(group);
    });
    group.attach(plane, send ? "send" : "recv", startMs);
    const member = (memberId: string, role: "send" | "recv"): Member => ({
      id: memberId,
      numericId: id,
      stream: { plane, index: 0 },
      transport: "tcp",
      counted: role === "recv" && send ? "received" : "bytes",
      startMs,
      client: peer,
      server: local,
      role,
      tcp: role === "send" ? handed.tcp : undefined,
      timed: role === "recv" && !send && r?.tripTimes === true,
      isochronous: role === "send" && send?.frames !== undefined,
    });
    const recv = receives ? member(String(id), "recv") : undefined;
    const sender = send ? member(fullDuplex ? `*${id}` : String(id), "send") : undefined;
    const members = [recv, sender].filter((m): m is Member => m !== undefined);
    members.forEach((m, i) => group.add(m, i === 0));
    let sendStoppedMs: number | undefined;
    plane.onStreamEnd((_stream, end) => {
      // A client gone while we sent (killed: its socket resets): stock 2.1.8's writer says so on stderr, then its
      // shutdown of the dead socket fails, before the final line.
      if (sender && sendStoppedMs === undefined && end.reason === "eof" && end.error?.code) {
        this.io.printer.warning(`tcp write failed: ${strerror(end.error.code)}`);
        this.io.printer.warning("shutdown failed: Transport endpoint is not connected");
      }
      if (recv) group.ended(recv);
      if (sender) group.ended(sender, sendStoppedMs);
      handed.release();
    });
    if (send?.amount.kind === "time") {
      const timer = setTimeout(() => {
        sendStoppedMs = performance.now();
        handed.tcp?.settle();
        plane.stopStream(0);
      }, timerDelay(goMs + send.amount.seconds * 1000, performance.now()));
      void plane.ended.then(() => clearTimeout(timer));
    }
    this.capDuration(plane, peer, r?.amount.kind === "time");
    if (t.connectBack?.when === "now") void this.connectBack(peer.host, t.connectBack, group);
    await plane.ended;
    this.planes.delete(plane);
    if (t.connectBack?.when === "after-eof") await this.connectBack(peer.host, t.connectBack, null);
    this.tests++;
    if (plan.singleClient && this.tests >= 1) void this.stop();
  }

  /** Why this connection's test is refused (a limit), or undefined. A connection joining its client's group is no new test. */
  private refusal(peer: Endpoint, r: ClientRequest | null): string | undefined {
    const no = checkTest(this.limits, iperf2Ask(r));
    if (no) return no.message;
    const max = this.limits.maxTests;
    const joining = this.groups.some((g) => g.key === peer.host && g.accepting);
    if (max && !joining && this.liveConnections.size >= max.value) return busyMessage(max, this.liveConnections.size);
    return undefined;
  }

  /** --max-duration also bounds tests by bytes (-n) and clients that overrun their -t: the stream is ended. */
  private capDuration(plane: DataPlane, peer: Endpoint, timed: boolean): void {
    const max = this.limits.maxDurationS;
    if (!max) return;
    const seconds = max.value + (timed ? DURATION_GRACE_S : 0);
    const timer = setTimeout(() => {
      this.io.warn(`ended test from ${peer.host} port ${peer.port} after ${seconds} s: this server allows ${max.value} s (${max.flag})`);
      plane.stopStream(0);
    }, seconds * 1000);
    void plane.ended.then(() => clearTimeout(timer));
  }

  /** -d (now, same report group) and -r (after the forward test, its own report): we connect to the client's -L port. */
  private async connectBack(host: string, cb: ServerSend & { port: number }, joined: ReportGroup | null): Promise<void> {
    const { io, plan } = this;
    const server = { host, port: cb.port };
    if (cb.port === 0 || host === "?") {
      io.warn(`not connecting back to ${host} port ${cb.port}: the header names no port we can reach`);
      return;
    }
    const id = this.ids.next();
    io.printer.info(...clientBanner({ host, port: cb.port, udp: false, buffer: defaultBuffers.tcpSend() }));
    let s: TcpSocket<null>;
    const connectStart = performance.now();
    try {
      s = await connectMain(io, server, {});
    } catch (e) {
      io.warn(`connect back to ${host} port ${cb.port} failed: ${e instanceof Error ? e.message : String(e)}`);
      return;
    }
    const connectMs = performance.now() - connectStart;
    const init = initialTcp(io.sockopt, s);
    const local = { host: (s.fd !== undefined ? io.sockopt?.localAddress(s.fd)?.host : undefined) ?? s.localAddress?.replace(/^::ffff:/, "") ?? "0.0.0.0", port: s.localPort ?? 0 };
    const handed = handToWorker(io.handOff, s as TcpSocket<unknown>, plan.enhanced);
    const sock = handed.fd;
    let plane: DataPlane;
    try {
      plane = await openOnHanded(handed, { kind: "tcp-send", id: 0, adopt: { ...handed.adopt, pending: 0 }, ...sendSpec(cb), idleTimeoutMs: IDLE_MS });
    } catch (e) {
      io.warn(`connect back to ${host} port ${cb.port} failed: ${e instanceof Error ? e.message : String(e)}`);
      return;
    }
    this.planes.add(plane);
    const startMs = performance.now();
    const notes = connectionNotes({ direction: "reverse", enhanced: plan.enhanced, sock, init, connectMs, at: new Date() });
    io.printer.info(connectionLine(`*${id}`, withInterface(local, plan.enhanced), server, notes));
    const group = joined ?? this.group(`${host}#back${id}`, 1, server, 1, cb.amount.kind === "time" ? cb.amount.seconds : 0);
    group.attach(plane, "send", startMs);
    const m: Member = {
      id: `*${id}`,
      numericId: id,
      stream: { plane, index: 0 },
      transport: "tcp",
      startMs,
      client: server,
      server: local,
      role: "send",
      tcp: handed.tcp,
    };
    group.add(m, joined === null);
    plane.onStreamEnd(() => {
      group.ended(m);
      handed.release();
    });
    plane.go();
    if (cb.amount.kind === "time") {
      const timer = setTimeout(() => {
        handed.tcp?.settle();
        plane.stopStream(0);
      }, timerDelay(cb.amount.seconds * 1000, 0));
      void plane.ended.then(() => clearTimeout(timer));
    }
    await plane.ended;
    this.planes.delete(plane);
  }
}
