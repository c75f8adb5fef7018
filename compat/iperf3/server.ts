/**
 * `anyperf iperf3 -s`: a server stock iperf3 clients test against, many at once. Every control connection is its
 * own test (ServerSession); data connections are told apart by their cookie and handed to the engine's Workers.
 * One connection that reads nothing, or a test that stalls, ends at its own deadline and blocks nobody else.
 */
import { DataPlane } from "../../src/engine/data-plane.ts";
import { TestRun } from "../../src/engine/test-run.ts";
import { explainSocketError } from "../../src/errors.ts";
import { loadNet } from "../../src/net/net.ts";
import type { Net, TcpListener, TcpSocket } from "../../src/net/types.ts";
import { COOKIE_BYTES, decodeCookie } from "../../interop/iperf3/cookie.ts";
import { State } from "../../interop/iperf3/constants.ts";
import { IErrno, describeIperfError } from "../../interop/iperf3/error-codes.ts";
import { Errno, errnoOfError } from "../../lib/errno.ts";
import { Iperf3ProtocolError, encodeServerError, encodeState } from "../../interop/iperf3/framing.ts";
import type { TestParams } from "../../interop/iperf3/params.ts";
import type { Results } from "../../interop/iperf3/results.ts";
import { ServerSession, type ServerEvent } from "../../interop/iperf3/server-session.ts";
import { QueuedWriter } from "../../src/net/queued-writer.ts";
import type { FdTools } from "./fd-tools.ts";
import { jsonDocumentText, jsonDocumentValue } from "./json-report.ts";
import { Entries } from "../../interop/iperf3/cjson.ts";
import type { Output } from "./output.ts";
import type { ServerPlan } from "./plan.ts";
import { settleReceived, StreamSampler, type LiveStream } from "./sampler.ts";
import { CpuWindow, IPERF_VERSION_STRING, SideReport, blankStream, modeOf, plainAddress, sendsOn, systemInfo, testRunPeer } from "./side.ts";
import { adoptedTcpSpec, onCpu, serverSendBlocks, serverUdpRecvSpec, serverUdpSendSpec } from "./stream-specs.ts";
import { UdpAcceptor, type Endpoint, type UdpTurnHolder } from "./udp-acceptor.ts";
import { acceptedLine, connectedLine, serverListening } from "./text-report.ts";
import { atTime, everyInterval, type GridTimer } from "./timers.ts";
import { busyMessage, checkTest, peerAllowed, rateExceeded, serverPolicy, tighter, type Limit, type ServerPolicy, type TestLimits } from "../../src/access/server-policy.ts";
import { RefusalLog } from "../../src/access/refusal-log.ts";
import { streamCount } from "../../interop/iperf3/params.ts";

interface ConnState {
  kind: "pending" | "control" | "gone";
  chunks: Uint8Array[];
  length: number;
  timer?: ReturnType<typeof setTimeout>;
  test?: ServerTest;
  writer?: QueuedWriter;
}

/**
 * 3.12's i_errno for "test duration too long" and "number of parallel streams too large": a stock client prints
 * those words (with its own compiled-in maximum); our log line names the real limit and its flag.
 */
const IEDURATION = 5;
const IENUMSTREAMS = 6;
const REFUSAL_ERRNO: Record<string, number> = { streams: IENUMSTREAMS, duration: IEDURATION, rate: IErrno.IETOTALRATE };

const TICK_MS = 100;
/** 3.12's words when Ctrl+C or SIGTERM ends the server (iperf_got_sigend with IESERVERTERM). */
const INTERRUPTED = "interrupt - the server has terminated";

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

export class Iperf3Server {
  private listener: TcpListener | undefined;
  /** The running test whose -M the listener carries. */
  private mssTest: ServerTest | undefined;
  private readonly byCookie = new Map<string, ServerTest>();
  readonly active = new Set<ServerTest>();
  private nextTest = 1;
  private udp: UdpAcceptor | undefined;
  private finished!: (code: number) => void;
  readonly done = new Promise<number>((r) => (this.finished = r));
  private idleTimer: ReturnType<typeof setTimeout> | undefined;
  /**
   * The test whose lines go out as they come (3.12 serves one test at a time and prints live, so a --logfile or a
   * terminal follows it); tests running beside it print their whole block when they end, so blocks never interleave.
   */
  private speaker: ServerTest | undefined;
  /** Set by terminate(): tests end with "interrupt - ..." and no new "Server listening" line is printed. */
  interrupted = false;
  /** The global --allow/--max-* policy merged with this dialect's own spellings (the tighter wins). */
  readonly limits: TestLimits & { maxTests: Limit };
  readonly refusals: RefusalLog;

  constructor(
    readonly plan: ServerPlan,
    readonly out: Output,
    readonly net: Net,
    readonly fd: FdTools,
    readonly policy: ServerPolicy = serverPolicy(),
  ) {
    this.limits = {
      maxTests: { value: policy.maxTests ?? plan.maxTests, flag: "--max-tests" },
      maxStreams: tighter(policy.maxStreams, "--max-streams", undefined, ""),
      maxDurationS: tighter(policy.maxDurationS, "--max-duration", plan.maxDurationS, "--server-max-duration"),
      maxRateBps: tighter(policy.maxRateBps, "--max-rate", plan.bitrateLimit, "--server-bitrate-limit"),
    };
    this.refusals = new RefusalLog((line) => this.out.err(`iperf3: ${line}\n`));
  }

  get listenHost(): string {
    return this.plan.bind ?? (this.plan.family === "ipv4" ? "0.0.0.0" : "::");
  }

  start(): void {
    const host = this.listenHost;
    try {
      this.listener = this.net.listen<ConnState>({
        hostname: host,
        port: this.plan.port,
        data: { kind: "pending", chunks: [], length: 0 },
        socket: {
          open: (s) => this.onOpen(s),
          data: (s, d) => this.onData(s, d),
          drain: (s) => s.data.writer?.drain(),
          close: (s) => this.onClose(s),
          error: () => {},
        },
      });
    } catch (e) {
      throw explainSocketError(e, { host, port: this.plan.port, role: "listen" });
    }
    if (!this.plan.output.json) this.out.out(serverListening(this.plan.port, this.nextTest));
    this.armIdle();
  }

  /** --idle-timeout: a one-off server that waits this long for a client gives up. */
  private armIdle(): void {
    if (this.plan.idleTimeoutS <= 0 || !this.plan.oneOff) return;
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      if (this.active.size === 0) this.stop(0);
    }, this.plan.idleTimeoutS * 1000);
  }

  stop(code: number): void {
    clearTimeout(this.idleTimer);
    this.listener?.stop(true);
    this.listener = undefined;
    this.udp?.close();
    this.finished(code);
  }

  /**
   * Ctrl+C or SIGTERM, as 3.12: every running test gets SERVER_TERMINATE and prints what it measured, then one
   * "iperf3: interrupt - the server has terminated" (with -J: each test's document carries it as its error, an idle
   * server prints an empty document with it); exit status 1.
   */
  terminate(): void {
    this.interrupted = true;
    const running = this.active.size;
    for (const t of [...this.active]) t.session.terminate();
    if (!this.plan.output.json) this.out.err(`iperf3: ${INTERRUPTED}\n`);
    else if (running === 0) {
      const start = new Entries([["connected", []], ["version", IPERF_VERSION_STRING], ["system_info", systemInfo()]]);
      this.out.out(jsonDocumentText({ start, intervals: [], end: new Entries([]), error: INTERRUPTED }));
    }
    this.stop(1);
  }

  private onOpen(s: TcpSocket<ConnState>): void {
    s.data = { kind: "pending", chunks: [], length: 0 };
    // Outside --allow: closed before a byte is read (control and data connections alike).
    if (!peerAllowed(s.remoteAddress, this.policy)) {
      s.data.kind = "gone";
      this.refusals.refused(`refused ${plainAddress(s.remoteAddress ?? "?")} port ${s.remotePort ?? 0}: not in --allow`);
      s.end();
      return;
    }
    // A connection that never sends its cookie is told so and dropped; it never holds a test slot.
    s.data.timer = setTimeout(() => {
      if (s.data.kind !== "pending") return;
      s.data.kind = "gone";
      s.write(encodeServerError(IErrno.IERECVCOOKIE, Errno.ETIMEDOUT));
      s.end();
    }, 10_000);
  }

  private onData(s: TcpSocket<ConnState>, d: Uint8Array): void {
    const st = s.data;
    if (st.kind === "control") {
      st.test?.session.receive(d, performance.now());
      return;
    }
    if (st.kind !== "pending") return;
    st.chunks.push(d.slice());
    st.length += d.length;
    if (st.length < COOKIE_BYTES) return;
    clearTimeout(st.timer);
    const all = concat(st.chunks);
    st.chunks = [];
    const c = decodeCookie(all.subarray(0, COOKIE_BYTES));
    const owner = c.ok ? this.byCookie.get(c.cookie) : undefined;
    if (owner) {
      st.kind = "gone";
      if (owner.session.phase === "creating-streams" && owner.params?.protocol === "tcp") owner.addTcpStream(s, all.length - COOKIE_BYTES);
      else {
        // A stream the test does not expect (or a reused cookie): refused like a bad cookie in 3.12.
        s.write(encodeState(State.ACCESS_DENIED));
        s.end();
      }
      return;
    }
    if (this.active.size >= this.limits.maxTests.value || this.mssTest) {
      st.kind = "gone";
      const why = this.mssTest ? "a test with -M holds the listener's MSS until it ends" : busyMessage(this.limits.maxTests, this.active.size);
      this.refusals.refused(`refused ${plainAddress(s.remoteAddress ?? "?")} port ${s.remotePort ?? 0}: ${why}`);
      s.write(encodeState(State.ACCESS_DENIED));
      s.end();
      return;
    }
    st.kind = "control";
    st.writer = new QueuedWriter(s as TcpSocket<unknown>);
    const t = new ServerTest(this, s, st.writer, this.nextTest++);
    st.test = t;
    this.active.add(t);
    clearTimeout(this.idleTimer);
    t.session.receive(all, performance.now());
  }

  private onClose(s: TcpSocket<ConnState>): void {
    const st = s.data;
    clearTimeout(st?.timer);
    if (st?.kind === "control") st.test?.session.eof(performance.now());
  }

  register(cookie: string, t: ServerTest): void {
    this.byCookie.set(cookie, t);
  }

  /** The UDP side of the port, shared by every UDP test (made on first use). */
  udpAcceptor(): UdpAcceptor {
    this.udp ??= new UdpAcceptor(this.net, this.fd.sockopt, this.listenHost, this.plan.port);
    return this.udp;
  }

  /** A test is over: free its slot, print its block, and stop a one-off server. */
  /** Whether `t` may print now: the first test to speak holds the output until it ends. */
  holdsOutput(t: ServerTest): boolean {
    this.speaker ??= t;
    return this.speaker === t;
  }

  /**
   * -M: the listener's SYN-ACKs advertise the test's MSS while it runs (3.12 re-creates its listener with it). Every
   * connection the listener accepts gets it, so the test must be the only one, and no other starts until it ends.
   */
  holdListenerMss(t: ServerTest, mss: number): void {
    if (this.active.size > 1) throw new Iperf3ProtocolError("-M needs the server to itself: another test is running", IErrno.IESETMSS, Errno.EBUSY);
    this.fd.listenerMss(this.listener?.fd, mss);
    this.mssTest = t;
  }

  finishedTest(t: ServerTest, block: string): void {
    if (this.mssTest === t) {
      this.mssTest = undefined;
      // Back to the route's MSS; a listener already closed (one-off, interrupt) has nothing to restore.
      if (this.listener) this.fd.listenerMss(this.listener.fd, 0);
    }
    if (this.speaker === t) this.speaker = undefined;
    if (!this.active.delete(t)) return;
    if (t.cookie) this.byCookie.delete(t.cookie);
    this.out.out(block);
    if (this.interrupted) return;
    if (this.plan.oneOff) return this.stop(0);
    if (!this.plan.output.json) this.out.out(serverListening(this.plan.port, this.nextTest));
  }
}

/** One test on the server: its session, its data planes and its report. */
class ServerTest {
  readonly session: ServerSession;
  cookie?: string;
  params?: TestParams;
  private side?: SideReport;
  private readonly live: Array<LiveStream | undefined> = [];
  private readonly opening: Array<Promise<void>> = [];
  private sampler?: StreamSampler;
  private readonly cpu = new CpuWindow();
  private tick: ReturnType<typeof setInterval>;
  private intervalTimer?: GridTimer;
  private omitTimer?: { stop(): void };
  private endTimer?: { stop(): void };
  /** While this test waits for or holds the UDP port's turn (its hellos come here). */
  private udpTurn?: UdpTurnHolder;
  /** The engine's view of this test, for the status endpoint. */
  private testRun?: TestRun;
  private text = "";
  /** How much of `text` is already printed (while this test holds the server's output). */
  private printed = 0;
  private lastBytes = -1;
  private lastDataMs = 0;
  private congestion?: string;
  private closed = false;
  /** Why this server refused the test (a limit), for our own error line. */
  private refusal?: string;
  /** [ms, bytes] over the --server-bitrate-limit window, for tests that asked for no rate. */
  private readonly rateSamples: Array<[number, number]> = [];
  private readonly peer: { host: string; port: number };

  constructor(
    private readonly server: Iperf3Server,
    private readonly socket: TcpSocket<ConnState>,
    writer: QueuedWriter,
    private readonly number: number,
  ) {
    const plan = server.plan;
    this.peer = { host: plainAddress(socket.remoteAddress ?? ""), port: socket.remotePort ?? 0 };
    this.session = new ServerSession(writer, (e) => this.onEvent(e), {
      nowMs: performance.now(),
      idleTimeoutMs: plan.rcvTimeoutMs,
      maxDurationS: server.limits.maxDurationS?.value ?? 0,
      // Requested rates are checked in prepare() (our message names the flag); measured rates in onTick().
      bitrateLimit: 0,
    });
    this.tick = setInterval(() => this.onTick(), TICK_MS);
  }

  private get plan(): ServerPlan {
    return this.server.plan;
  }

  private onTick(): void {
    const now = performance.now();
    if (this.sampler && this.session.phase === "running") {
      const pr = this.sampler.progress(this.params?.len ?? 1);
      const b = pr.sent + pr.received;
      if (b !== this.lastBytes) {
        this.lastBytes = b;
        this.lastDataMs = now;
      }
    }
    this.checkMeasuredRate(now);
    this.session.tick(now, this.lastDataMs || undefined);
  }

  /**
   * The rate limit also holds for tests that asked for none (unlimited TCP): like 3.12, the average over the
   * --server-bitrate-limit window (default 5 s; /0 = the whole test) ends a test that runs faster.
   */
  private checkMeasuredRate(now: number): void {
    const limit = this.server.limits.maxRateBps;
    if (!limit || !this.sampler || this.session.phase !== "running") return;
    const pr = this.sampler.progress(this.params?.len ?? 1);
    this.rateSamples.push([now, pr.sent + pr.received]);
    const windowMs = this.plan.bitrateLimitIntervalS * 1000;
    while (windowMs > 0 && this.rateSamples.length > 2 && now - this.rateSamples[1]![0] >= windowMs) this.rateSamples.shift();
    const [t0, b0] = this.rateSamples[0]!;
    const spanMs = now - t0;
    if (spanMs <= 0 || (windowMs > 0 && spanMs < windowMs) || (windowMs === 0 && spanMs < 1000)) return;
    const bps = ((pr.sent + pr.received - b0) * 8) / (spanMs / 1000);
    if (bps <= limit.value) return;
    this.refuse(rateExceeded(limit, bps, Math.round(spanMs / 100) / 10), IErrno.IETOTALRATE);
  }

  /** A limit says no: SERVER_ERROR with the stock i_errno, and one line naming the limit on our side. */
  private refuse(message: string, iErrno: number): void {
    this.refusal = message;
    this.server.refusals.refused(`refused test from ${this.peer.host} port ${this.peer.port}: ${message}`);
    this.session.fail(new Iperf3ProtocolError(message, iErrno, Errno.OK));
  }

  private onEvent(e: ServerEvent): void {
    switch (e.type) {
      case "cookie":
        this.cookie = e.cookie;
        this.server.register(e.cookie, this);
        return;
      case "prepare": {
        const p = e.params;
        const streams = streamCount(p);
        const no = checkTest(this.server.limits, {
          streams,
          durationS: p.bytes > 0 || p.blocks > 0 ? undefined : p.timeS,
          rateBps: p.bandwidth > 0 ? p.bandwidth * streams : undefined,
        });
        if (no) return this.refuse(no.message, REFUSAL_ERRNO[no.limit]!);
        this.prepare(p);
        return;
      }
      case "streams-ready":
        void this.begin();
        return;
      case "stop":
        void this.stop();
        return;
      case "client-results":
        return;
      case "done":
        this.cleanup();
        return;
      case "aborted":
        this.abort(e.clientTerminated, e.failure.iErrno, e.failure.errno ?? 0, e.failure.detail);
        return;
    }
  }

  private prepare(p: TestParams): void {
    const now = performance.now();
    this.params = p;
    const mode = modeOf(p, "server");
    const tcpSender = p.protocol === "tcp" && mode !== "receiver";
    this.side = new SideReport(
      "server",
      p,
      { unitFormat: "a", statsIntervalS: this.plan.output.intervalS || 1, verbose: this.plan.output.verbose, senderHasRetransmits: tcpSender ? 1 : 0 },
      {
        role: "server",
        connected: [],
        version: IPERF_VERSION_STRING,
        systemInfo: systemInfo(),
        timestamp: new Date(),
        acceptedConnection: this.peer,
        cookie: this.cookie,
        tcpMss: p.protocol === "tcp" ? { explicit: p.mss > 0, value: p.mss } : undefined,
        targetBitrate: p.bandwidth,
        sockBufs: [],
        testStart: {
          protocol: p.protocol === "tcp" ? "TCP" : "UDP", numStreams: p.parallel, blksize: p.len, omit: p.omitS, duration: p.timeS,
          bytes: p.bytes, blocks: p.blocks, reverse: p.reverse, tos: p.tos, targetBitrate: p.bandwidth,
        },
      },
    );
    this.say(acceptedLine(this.peer.host, this.peer.port));
    this.testRun = new TestRun(
      { mode: "iperf3", role: "server", peer: testRunPeer(this.peer), transport: p.protocol, test: "stream" },
      { warmupS: 0, durationS: p.bytes || p.blocks ? 0 : p.timeS, cooldownS: 0, intervalS: this.plan.output.intervalS || 1 },
    );
    if (p.protocol === "tcp") {
      if (p.mss) {
        try {
          this.server.holdListenerMss(this, p.mss);
        } catch (e) {
          return this.session.fail(e as Iperf3ProtocolError);
        }
      }
      return this.session.listenerReady(now);
    }
    this.prepareUdp();
  }

  /**
   * UDP streams all use the server's port, each on its own socket connected to its client, as in 3.12. Hellos
   * carry no cookie, so this test first waits for the port's turn (UdpAcceptor), then asks for its streams.
   */
  private prepareUdp(): void {
    const turn: UdpTurnHolder = { hello: (from) => this.onUdpHello(from) };
    this.udpTurn = turn;
    this.server
      .udpAcceptor()
      .take(turn)
      .then(
        () => {
          if (this.udpTurn !== turn) return;
          this.session.listenerReady(performance.now());
        },
        (err: unknown) => {
          this.udpTurn = undefined;
          this.session.listenerFailed(IErrno.IESTREAMLISTEN, errnoOfError(err, Errno.EADDRINUSE), (err as Error).message);
        },
      );
  }

  private releaseUdpTurn(): void {
    if (!this.udpTurn) return;
    this.server.udpAcceptor().release(this.udpTurn);
    this.udpTurn = undefined;
  }

  /** A hello on the server port while this test holds the turn: the next stream, on a socket of its own. */
  private onUdpHello(from: Endpoint): void {
    // Another host's hello is not this client's stream (3.12 would take it; a stranger must not join a test).
    if (plainAddress(from.host) !== this.peer.host) return;
    const p = this.params!;
    const now = performance.now();
    const got = this.session.acceptStream(now);
    if (!got) return;
    const n = this.live.length;
    this.live.push(undefined);
    const sender = sendsOn(p, "server", n);
    const acceptor = this.server.udpAcceptor();
    let sock: ReturnType<UdpAcceptor["streamSocket"]>;
    try {
      sock = acceptor.streamSocket(from);
    } catch (e) {
      this.session.fail(new Iperf3ProtocolError(`cannot open a UDP stream socket: ${(e as Error).message}`, IErrno.IESTREAMACCEPT, errnoOfError(e, Errno.EIO)));
      return;
    }
    // A view has no address of its own: the client sends to the address its control connection reached.
    const local = (sock.local ? undefined : this.server.fd.localAddress(sock.fd)) ?? { host: this.socket.localAddress ?? acceptor.host, port: acceptor.port };
    const spec = sender ? serverUdpSendSpec(sock, from, p, serverSendBlocks(p, n)) : serverUdpRecvSpec(sock, from, { host: acceptor.host, port: acceptor.port }, p);
    const opened = DataPlane.open([onCpu(spec, p.serverAffinity ?? this.server.plan.affinity)]).then(
      (plane) => {
        if (this.closed) return void plane.stop();
        this.addLive(n, plane, undefined, got.id, sender, { host: plainAddress(local.host), port: local.port }, { host: plainAddress(from.host), port: from.port });
      },
      (err: unknown) => this.session.fail(new Iperf3ProtocolError(`data stream failed: ${(err as Error).message}`, IErrno.IESTREAMACCEPT, errnoOfError(err, Errno.EIO))),
    );
    this.opening.push(opened);
  }

  /** A TCP data connection with our cookie: detach it from the main thread and give it to a Worker. */
  addTcpStream(s: TcpSocket<ConnState>, pending: number): void {
    const p = this.params!;
    const got = this.session.acceptStream(performance.now());
    if (!got) {
      s.write(encodeState(State.ACCESS_DENIED));
      s.end();
      return;
    }
    const n = this.live.length;
    const sender = sendsOn(p, "server", n);
    const remote = { host: plainAddress(s.remoteAddress ?? ""), port: s.remotePort ?? 0 };
    const localPort = s.localPort ?? 0;
    const localHost = s.localAddress;
    let handed: ReturnType<FdTools["detach"]>;
    try {
      handed = this.server.fd.detach(s as TcpSocket<unknown>);
    } catch (e) {
      this.session.fail(new Iperf3ProtocolError(`cannot hand the data connection to a worker: ${(e as Error).message}`, IErrno.IESTREAMACCEPT, Errno.EIO));
      return;
    }
    const { fd, info } = handed;
    const local = (info !== undefined ? this.server.fd.localAddress(info) : undefined) ?? { host: localHost ?? this.server.listenHost, port: localPort };
    if (p.congestion) {
      try {
        this.server.fd.setCongestion(info, p.congestion);
      } catch (e) {
        if (info !== undefined) this.server.fd.close(info);
        if (!handed.local) this.server.fd.close(fd);
        this.session.fail(e as Iperf3ProtocolError);
        return;
      }
    }
    if (info !== undefined) this.congestion ??= this.server.fd.congestion(info);
    this.side?.start.sockBufs.push({ sockBufsize: p.window, sndbufActual: (info !== undefined ? this.server.fd.sndbuf(info) : undefined) ?? 0, rcvbufActual: (info !== undefined ? this.server.fd.rcvbuf(info) : undefined) ?? 0 });
    // Only a sender's TCP_INFO is sampled (retransmits, cwnd); a receiver's duplicate is not needed past the start.
    const infoFd = sender ? info : undefined;
    if (!sender && info !== undefined) this.server.fd.close(info);
    this.live.push(undefined);
    const opened = DataPlane.open([onCpu(adoptedTcpSpec(sender ? "send" : "recv", handed, pending, p, serverSendBlocks(p, n)), p.serverAffinity ?? this.server.plan.affinity)]).then(
      (plane) => {
        if (this.closed) {
          if (infoFd !== undefined) this.server.fd.close(infoFd);
          return void plane.stop();
        }
        this.addLive(n, plane, infoFd, got.id, sender, { host: plainAddress(local.host), port: local.port }, remote);
      },
      (err: unknown) => {
        if (infoFd !== undefined) this.server.fd.close(infoFd);
        this.session.fail(new Iperf3ProtocolError(`data stream failed: ${(err as Error).message}`, IErrno.IESTREAMACCEPT, Errno.EIO));
      },
    );
    this.opening.push(opened);
  }

  private addLive(n: number, plane: DataPlane, infoFd: number | undefined, id: number, sender: boolean, local: { host: string; port: number }, remote: { host: string; port: number }): void {
    const report = blankStream(id, 5 + 2 * n, sender);
    Object.assign(report, { localHost: local.host, localPort: local.port, remoteHost: remote.host, remotePort: remote.port });
    this.live[n] = { report, plane, index: 0, tcpInfo: infoFd !== undefined };
    this.testRun?.attach(plane, sender ? "send" : "recv");
    if (infoFd !== undefined && this.server.fd.sockopt) this.testRun?.readTcpInfo(plane, 0, infoFd, this.server.fd.sockopt);
    this.side?.start.connected.push({ socket: report.socket, localHost: local.host, localPort: local.port, remoteHost: remote.host, remotePort: remote.port });
  }

  private async begin(): Promise<void> {
    // streams-ready fires inside acceptStream(), before the caller has made the last stream's socket and queued its
    // open; without libc that socket is a view of the port's catching socket, which must not close before it is made.
    await Promise.resolve();
    // Every stream is in: the next UDP test may take the port's turn.
    this.releaseUdpTurn();
    await Promise.allSettled(this.opening);
    if (this.closed || this.session.phase !== "starting") return;
    const streams = this.live.filter((s): s is LiveStream => s !== undefined);
    const p = this.params!;
    const side = this.side!;
    for (const s of streams) this.say(connectedLine(s.report));
    side.test.streams = streams.map((s) => s.report);
    side.test.congestionUsed = p.protocol === "tcp" ? this.congestion : undefined;
    const run = this.testRun!;
    // With -i the intervals are cut on iperf3's clock, once, for its reports and /status alike.
    if (this.plan.output.intervalS > 0) run.cutsIntervals();
    this.sampler = new StreamSampler(streams, p.protocol === "udp", run);
    // 3.12's server reports retransmits when it sends TCP and can read TCP_INFO; it prints before it hears the client.
    side.test.senderHasRetransmits = p.protocol === "tcp" && side.test.mode !== "receiver" && this.sampler.hasRetransmits ? 1 : 0;
    const now = performance.now();
    this.cpu.restart();
    // iperf3's omitted seconds are the engine's warm-up: counted apart, left out of the measured window. The window
    // opens before TEST_START goes out, so no byte the client sends on it falls before.
    const tcp = p.protocol === "tcp";
    this.sampler.start(now, p.omitS, p.omitS === 0 ? run.beginMeasuring(now, tcp) : run.beginWarmup(now, tcp));
    this.lastDataMs = now;
    this.session.begin(now);
    for (const pl of new Set(streams.map((s) => s.plane))) pl.go();
    this.armSendEnd(now, streams);
    const iv = this.plan.output.intervalS;
    if (iv > 0) {
      this.intervalTimer = everyInterval(iv * 1000, () => {
        this.sampler?.sample(performance.now());
        this.flushIntervals();
      });
    }
    if (p.omitS > 0) {
      this.omitTimer = atTime(now + p.omitS * 1000, () => {
        const omitEnd = performance.now();
        this.sampler?.omitEnd(omitEnd);
        this.testRun?.beginMeasuring(omitEnd);
        this.flushIntervals();
        // Interval boundaries restart with the measured part, as 3.12's omit timer does.
        if (this.intervalTimer) {
          this.intervalTimer?.stop();
          this.intervalTimer = everyInterval(iv * 1000, () => {
            this.sampler?.sample(performance.now());
            this.flushIntervals();
          });
        }
      });
    }
  }

  /**
   * A timed test's senders stop at its end on our clock, which started a little before the client's: what we send
   * while the client's TEST_END is on its way, the client, done counting, never reads. 3.12's server, one C
   * thread, notices TEST_END within microseconds; our main thread may take milliseconds, and at hundreds of Mbit/s
   * in 128 KiB blocks (or 32 KiB datagrams) that is several blocks sent but never received.
   */
  private armSendEnd(now: number, streams: LiveStream[]): void {
    const p = this.params!;
    const senders = streams.filter((s) => s.report.sender);
    if (p.timeS <= 0 || p.bytes > 0 || p.blocks > 0 || senders.length === 0) return;
    this.endTimer = atTime(now + (p.omitS + p.timeS) * 1000, () => {
      for (const s of senders) void s.plane.stop();
    });
  }

  private flushIntervals(): void {
    if (!this.side) return;
    const { text } = this.side.drainIntervals();
    if (!this.plan.output.json) this.say(text);
  }

  /** Text report lines: kept for --get-server-output and the end block, printed now if this test holds the output. */
  private say(text: string): void {
    this.text += text;
    // -J prints one document at the end; the text is only kept.
    if (this.plan.output.json || !this.server.holdsOutput(this)) return;
    this.server.out.out(this.text.slice(this.printed));
    this.printed = this.text.length;
  }

  /**
   * TEST_END: the client has stopped sending, but what it sent last may still be on the way. Unlike 3.12, which
   * stops counting at once, we let our receive streams settle (their counters stand still, at most 100 ms) so our
   * received total matches the client's sent total; the test's duration still ends at TEST_END.
   */
  private async stop(): Promise<void> {
    const now = performance.now();
    this.stopTimers();
    const cpu = this.cpu.stop();
    if (this.sampler && this.live.some((s) => s && !s.report.sender)) {
      // Our senders stop counting now; only what the client sent may still arrive.
      this.sampler.freeze((s) => s.report.sender);
      for (const s of this.live) if (s?.report.sender) void s.plane.stop();
      await settleReceived(this.sampler, this.params!.len);
    }
    if (this.closed) return;
    this.finishStop(now, cpu);
  }

  private finishStop(now: number, cpu: [number, number, number]): void {
    const p = this.params!;
    const side = this.side!;
    side.test.cpu = cpu;
    if (this.sampler) {
      this.sampler.finish(now);
      this.flushIntervals();
    }
    // After the time-critical freeze above and the last interval's cut: ending the engine's window reads host counters.
    this.testRun?.endMeasuring();
    this.releaseData();
    const shr = side.test.mode === "receiver" ? -1 : p.protocol === "tcp" && this.sampler?.hasRetransmits ? 1 : 0;
    const results: Results = this.sampler
      ? this.sampler.results(cpu, shr, side.test.congestionUsed)
      : { cpuUtilTotal: cpu[0], cpuUtilUser: cpu[1], cpuUtilSystem: cpu[2], senderHasRetransmits: shr, streams: [] };
    if (this.plan.output.json) {
      if (p.getServerOutput) results.serverOutputJson = jsonDocumentValue(this.jsonDoc());
    } else {
      this.say(side.summaryText());
      if (p.getServerOutput) results.serverOutputText = this.text;
    }
    this.session.stopped(results, now);
  }

  private jsonDoc(error?: string) {
    const side = this.side!;
    return { start: side.jsonStart(), intervals: side.jsonIntervals, end: side.jsonEnd(), error };
  }

  private stopTimers(): void {
    this.intervalTimer?.stop();
    this.omitTimer?.stop();
    this.endTimer?.stop();
    this.intervalTimer = undefined;
    this.omitTimer = undefined;
    this.endTimer = undefined;
  }

  /** Stops the data planes (the stop itself runs in the background); the Test closes the TCP_INFO duplicates. */
  private releaseData(): void {
    for (const s of this.live) if (s) void s.plane.stop();
    this.releaseUdpTurn();
  }

  private abort(clientTerminated: boolean, iErrno: number, errno: number, detail: string): void {
    if (this.closed) return;
    this.stopTimers();
    // Like 3.12 on CLIENT_TERMINATE: the summary of what was measured, then the reason.
    if (this.sampler && this.side && this.sampler.stopMs === 0) {
      this.side.test.cpu = this.cpu.stop();
      this.sampler.finish(performance.now());
      this.flushIntervals();
      if (!this.plan.output.json) this.say(this.side.summaryText());
    }
    // Our own Ctrl+C: the server prints the interrupt line once, after every test's summary.
    if (this.server.interrupted && iErrno === IErrno.IESERVERTERM) return this.cleanup(INTERRUPTED);
    const msg = clientTerminated ? "the client has terminated" : (this.refusal ?? `${describeIperfError(iErrno, errno)} (${detail})`);
    this.cleanup(msg, clientTerminated ? `iperf3: ${msg}\n` : `iperf3: error - ${msg}\n`);
  }

  private cleanup(error?: string, errorLine = ""): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.tick);
    this.stopTimers();
    this.releaseData();
    this.testRun?.finish();
    let block: string;
    if (this.plan.output.json) block = this.side ? jsonDocumentText(this.jsonDoc(error)) : errorLine;
    else block = this.text.slice(this.printed) + errorLine;
    this.server.finishedTest(this, block);
  }
}

export async function runServer(plan: ServerPlan, out: Output, fd: FdTools, signal: AbortSignal): Promise<number> {
  const net = await loadNet();
  if (plan.affinity !== undefined) fd.pinMain(plan.affinity);
  const server = new Iperf3Server(plan, out, net, fd);
  server.start();
  const onAbort = () => server.terminate();
  signal.addEventListener("abort", onAbort, { once: true });
  // Stopped before listening (its banner could not be written: src/output-failure.ts).
  if (signal.aborted) onAbort();
  const code = await server.done;
  signal.removeEventListener("abort", onAbort);
  return code;
}
