/**
 * `anyperf iperf3 -c HOST`: a client for stock iperf3 servers (and ours). The control connection and the TCP data
 * connections are made on the main thread (each data connection must start with the cookie), then every data
 * stream is handed to the engine's Workers; UDP streams are opened by the Workers and shake hands one at a time.
 */
import { lookup } from "node:dns/promises";
import { writeSync } from "node:fs";
import { DataPlane } from "../../src/engine/data-plane.ts";
import { TestRun } from "../../src/engine/test-run.ts";
import { UserError } from "../../src/errors.ts";
import { connectTcp } from "../../src/worker/sockets.ts";
import { Interrupted, unlessAborted } from "../../src/signals.ts";
import { loadNet } from "../../src/net/net.ts";
import type { Net, TcpSocket } from "../../src/net/types.ts";
import { ClientSession, type ClientEvent } from "../../interop/iperf3/client-session.ts";
import { Defaults, Limits } from "../../interop/iperf3/constants.ts";
import { encodeCookie, generateCookie } from "../../interop/iperf3/cookie.ts";
import { IErrno, describeIperfError } from "../../interop/iperf3/error-codes.ts";
import { Errno, errnoOfError } from "../../lib/errno.ts";
import { Iperf3ProtocolError } from "../../interop/iperf3/framing.ts";
import type { TestParams } from "../../interop/iperf3/params.ts";
import { clientAuthToken } from "./auth-files.ts";
import { UDP_HELLO } from "../../interop/iperf3/udp.ts";
import type { Results as PeerResults } from "../../interop/iperf3/results.ts";
import { Entries, type CValue } from "../../interop/iperf3/cjson.ts";
import { QueuedWriter } from "../../src/net/queued-writer.ts";
import type { FdTools } from "./fd-tools.ts";
import type { Sockopt } from "../../src/sockopt/sockopt.ts";
import { jsonDocumentText, jsonStreamLine } from "./json-report.ts";
import type { Output } from "./output.ts";
import type { ClientPlan } from "./plan.ts";
import { settleReceived, StreamSampler, type LiveStream } from "./sampler.ts";
import { CpuWindow, IPERF_VERSION_STRING, SideReport, blankStream, plainAddress, sendsOn, streamId, systemInfo, testRunPeer } from "./side.ts";
import { adoptedTcpSpec, clientSendBlocks, clientUdpRecvSpec, clientUdpSendSpec, onCpu, socketOptions } from "./stream-specs.ts";
import { DONE, connectedLine, connectingLines } from "./text-report.ts";
import { TestClock } from "./test-clock.ts";
import { handTcp } from "./tcp-hand-off.ts";

const errnoOf = (e: unknown) => errnoOfError(e, Errno.EIO);
const UDP_HELLO_TIMEOUT_MS = 30_000;

interface CtrlState {
  writer?: QueuedWriter;
  session?: ClientSession;
}

/** What a front end other than `anyperf iperf3` reads from a run (`anyperf client` against an iperf3 server). */
export interface ClientHooks {
  /** The run's Test, once the control connection is up. */
  onRun?(run: TestRun): void;
  /** The server's half of the results exchange: its bytes per stream and its CPU. */
  onPeerResults?(results: PeerResults): void;
}

class Iperf3Client {
  private session?: ClientSession;
  private side!: SideReport;
  private address = "";
  private family: "ipv4" | "ipv6" = "ipv4";
  private readonly live: LiveStream[] = [];
  private sampler?: StreamSampler;
  /** The engine's view of this test, for the status endpoint. */
  private testRun?: TestRun;
  private readonly cpu = new CpuWindow();
  private timers: Array<ReturnType<typeof setTimeout>> = [];
  private clock?: TestClock;
  private tick?: ReturnType<typeof setInterval>;
  private congestion?: string;
  private ctrlMss = 0;
  private ctrlFd = -1;
  private lastCookieMs: number | undefined;
  private ended = false;
  private opening: Promise<void> = Promise.resolve();
  private starting: Promise<void> = Promise.resolve();
  private finished!: (code: number) => void;
  private readonly done = new Promise<number>((r) => (this.finished = r));
  private params: TestParams;
  private readonly json: boolean;
  private readonly stream: boolean;

  constructor(
    private readonly plan: ClientPlan,
    private readonly out: Output,
    private readonly fd: FdTools,
    private readonly net: Net,
    private readonly hooks: ClientHooks = {},
  ) {
    this.params = plan.params;
    this.json = plan.output.json;
    this.stream = plan.output.jsonStream;
  }

  private get text(): boolean {
    return !this.json && !this.stream;
  }

  private makeSide(p: TestParams): SideReport {
    return new SideReport(
      "client",
      p,
      { unitFormat: this.plan.output.format, statsIntervalS: this.plan.output.intervalS || 1, verbose: this.plan.output.verbose, senderHasRetransmits: 0 },
      { role: "client", connected: [], version: IPERF_VERSION_STRING, systemInfo: systemInfo(), sockBufs: [] },
    );
  }

  async run(signal: AbortSignal): Promise<number> {
    const onAbort = () => {
      if (this.session) return this.session.terminate();
      this.fail("", false, true);
    };
    signal.addEventListener("abort", onAbort, { once: true });
    try {
      if (this.plan.affinity !== undefined) this.fd.pinMain(this.plan.affinity);
      // A connect the server's full backlog holds (SYNs dropped, up to 2 min) must not hold Ctrl+C: 3.12 exits at once.
      const ctrl = await unlessAborted(this.connectControl(), signal, (s) => s.terminate());
      this.ctrlFd = ctrl.fd ?? -1;
      if (this.plan.cntlKa) this.sockoptFor("--cntl-ka").setKeepalive(this.ctrlFd, this.plan.cntlKa);
      this.startControl(ctrl);
    } catch (e) {
      // onAbort has reported the interrupt already.
      if (!(e instanceof Interrupted)) this.fail(e instanceof Iperf3ProtocolError ? describeIperfError(e.iErrno, e.errno) : (e as Error).message, false);
    }
    const code = await this.done;
    signal.removeEventListener("abort", onAbort);
    return code;
  }

  /** connectTcp connects through Sockopt, so a failed connect names its real errno (Bun says ECONNREFUSED for all). */
  private socketEnv() {
    return { net: this.net, sockopt: this.fd.sockopt };
  }

  /** Options set before connect need a socket made through libc, which only the Linux (glibc) build reaches. */
  private sockoptFor(flag: string): Sockopt {
    if (!this.fd.sockopt) throw new UserError(`${flag} needs the Linux (glibc) build of anyperf: this OS cannot set it before connect; drop ${flag}`);
    return this.fd.sockopt;
  }

  private async connectControl(): Promise<TcpSocket<CtrlState>> {
    const plan = this.plan;
    let addr: { address: string; family: number };
    try {
      addr = await lookup(plan.host, { family: plan.family === "ipv4" ? 4 : plan.family === "ipv6" ? 6 : 0 });
    } catch {
      throw new UserError(`unable to connect to server: Name or service not known (check the host name "${plan.host}")`);
    }
    this.address = addr.address;
    this.family = addr.family === 6 ? "ipv6" : "ipv4";
    const handlers = {
      data: (s: TcpSocket<CtrlState>, d: Uint8Array) => s.data.session?.receive(d, performance.now()),
      drain: (s: TcpSocket<CtrlState>) => s.data.writer?.drain(),
      close: (s: TcpSocket<CtrlState>) => s.data.session?.eof(performance.now()),
      error: () => {},
    };
    const connect = async (): Promise<TcpSocket<CtrlState>> => {
      if (plan.bind) {
        const so = this.sockoptFor("-B");
        const raw = so.preparedTcpSocket(this.family, {}, { host: plan.bind, port: 0 });
        so.connectNonBlocking(raw, this.address, plan.port);
        await so.awaitConnected(raw, { host: this.address, port: plan.port }, plan.connectTimeoutMs || 75_000);
        return this.net.connect<CtrlState>({ fd: raw, data: {}, socket: handlers });
      }
      return connectTcp<CtrlState>(this.socketEnv(), { host: this.address, port: plan.port }, undefined, {}, {}, handlers);
    };
    try {
      const t = plan.connectTimeoutMs;
      if (!t) return await connect();
      return await Promise.race([
        connect(),
        new Promise<never>((_, rej) => setTimeout(() => rej(Object.assign(new Error("timed out"), { code: "ETIMEDOUT" })), t)),
      ]);
    } catch (e) {
      throw new Iperf3ProtocolError(`cannot connect to ${plan.host}:${plan.port}`, IErrno.IECONNECT, errnoOf(e));
    }
  }

  private startControl(ctrl: TcpSocket<CtrlState>): void {
    const writer = new QueuedWriter(ctrl as TcpSocket<unknown>);
    const cookie = generateCookie();
    // Made at connect time: the server compares the token's time with its own clock.
    if (this.plan.auth) this.params = { ...this.params, authToken: clientAuthToken(this.plan.auth) };
    const session = new ClientSession(writer, (e) => this.onEvent(e), { cookie, params: this.params, nowMs: performance.now() });
    this.session = session;
    ctrl.data.writer = writer;
    ctrl.data.session = session;
    session.start(performance.now());
    // Like 3.12, the MSS is read after the cookie went out: before the first write Linux reports a smaller one
    // (32741 instead of 32768 on loopback).
    const mss = this.fd.maxSeg(this.ctrlFd) ?? 0;
    this.ctrlMss = mss;
    if (this.plan.udpLenFromMss) {
      // 3.12: UDP block = the control connection's MSS when it is a usable datagram size.
      this.params = { ...this.params, len: mss > 0 && mss <= Limits.maxUdpBlockSize ? mss : Defaults.udpBlockSizeFallback };
      session.setParams(this.params);
    }
    this.side = this.makeSide(this.params);
    const p = this.params;
    const start = this.side.start;
    start.timestamp = new Date();
    start.connectingTo = { host: this.plan.host, port: this.plan.port };
    start.cookie = cookie;
    if (p.protocol === "tcp") start.tcpMss = p.mss ? { explicit: true, value: p.mss } : { explicit: false, value: this.ctrlMss };
    start.targetBitrate = p.bandwidth;
    this.testRun = new TestRun(
      { mode: "iperf3", role: "client", peer: testRunPeer({ host: this.address, port: this.plan.port }), transport: p.protocol, test: "stream" },
      { warmupS: 0, durationS: p.bytes || p.blocks ? 0 : p.timeS, cooldownS: 0, intervalS: this.plan.output.intervalS || 1 },
    );
    this.hooks.onRun?.(this.testRun);
    this.tick = setInterval(() => this.session?.tick(performance.now()), 250);
  }

  private onEvent(e: ClientEvent): void {
    switch (e.type) {
      case "connected":
        if (this.text) this.out.out(this.preamble());
        return;
      case "create-streams":
        this.opening = this.openStreams();
        return;
      case "start": {
        // The server started its clock when it sent TEST_START, right after our last data connection arrived: half
        // a round trip after we wrote its cookie. We may read the message later (a busy event loop); both ends'
        // clocks must match, or -O and -t windows slide against the server's.
        const now = performance.now();
        const rttMs = (this.fd.tcpInfo(this.ctrlFd)?.rtt_us ?? 0) / 1000;
        const t0 = this.lastCookieMs !== undefined ? Math.min(now, this.lastCookieMs + rttMs / 2) : now;
        this.starting = this.opening.then(() => {
          if (this.session?.phase !== "closed") this.startTest(t0);
        });
        return;
      }
      case "running":
        void this.starting.then(() => {
          for (const pl of new Set(this.live.map((s) => s.plane))) pl.go();
        });
        return;
      case "exchange-results":
        void this.sendResults();
        return;
      case "server-results":
        this.sampler?.mergePeer(e.results);
        this.side.applyPeer(e.results, "client");
        this.hooks.onPeerResults?.(e.results);
        return;
      case "done":
        this.finish();
        return;
      case "failed":
        this.fail(e.message, e.serverTerminated, e.failure.iErrno === IErrno.IECLIENTTERM);
        return;
    }
  }

  private preamble(): string {
    const p = this.params;
    let s = "";
    if (this.plan.output.verbose) {
      s += `${IPERF_VERSION_STRING}\n${systemInfo()}\nControl connection MSS ${this.ctrlMss}\n`;
      if (this.plan.udpLenFromMss) s += `Setting UDP block size to ${p.len}\n`;
      s += `Time: ${new Date().toUTCString()}\n`;
    }
    s += connectingLines(this.plan.host, this.plan.port, p.reverse);
    if (this.plan.output.verbose) {
      s += `      Cookie: ${this.side.start.cookie}\n`;
      if (p.protocol === "tcp") s += p.mss ? `      TCP MSS: ${p.mss}\n` : `      TCP MSS: ${this.ctrlMss} (default)\n`;
      if (p.bandwidth) s += `      Target Bitrate: ${p.bandwidth}\n`;
    }
    return s;
  }

  /** CREATE_STREAMS: connect (TCP) or shake hands (UDP) stream by stream, in id order, as 3.12 does. */
  private async openStreams(): Promise<void> {
    const p = this.params;
    const n = p.bidirectional ? 2 * p.parallel : p.parallel;
    try {
      for (let i = 0; i < n; i++) {
        if (this.ended) return;
        const sender = sendsOn(p, "client", i);
        const { infoFd, ...ls }: LiveStream & { infoFd?: number } = p.protocol === "tcp" ? await this.openTcp(i, sender) : await this.openUdp(i, sender);
        this.live.push(ls);
        this.testRun?.attach(ls.plane, sender ? "send" : "recv");
        if (infoFd !== undefined && this.fd.sockopt) {
          this.testRun?.readTcpInfo(ls.plane, 0, infoFd, this.fd.sockopt);
          ls.tcpInfo = true;
        }
        const r = ls.report;
        if (this.text) this.out.out(connectedLine(r));
        this.side.start.connected.push({ socket: r.socket, localHost: r.localHost, localPort: r.localPort, remoteHost: r.remoteHost, remotePort: r.remotePort });
      }
    } catch (e) {
      const err = e instanceof Iperf3ProtocolError ? e : new Iperf3ProtocolError((e as Error).message, IErrno.IESTREAMCONNECT, errnoOf(e));
      this.session?.fail(err, false);
    }
  }

  private report(i: number, sender: boolean, localPort: number): LiveStream["report"] {
    const r = blankStream(streamId(i), 5 + 2 * i, sender);
    Object.assign(r, {
      localHost: plainAddress(this.family === "ipv6" ? "::" : "0.0.0.0"),
      localPort,
      remoteHost: plainAddress(this.address),
      remotePort: this.plan.port,
    });
    return r;
  }

  /** `infoFd`: a main-thread duplicate of a sender's socket, for the Test to read its TCP_INFO at every cut. */
  private async openTcp(i: number, sender: boolean): Promise<LiveStream & { infoFd?: number }> {
    const p = this.params;
    const plan = this.plan;
    const pre = socketOptions(p, true);
    const handlers = { data: () => {}, close: () => {}, error: () => {} };
    const bindPort = plan.cport ? plan.cport + i : 0;
    let s: TcpSocket<unknown>;
    try {
      if (pre.mss !== undefined || pre.recvBuffer !== undefined || plan.bind || bindPort) {
        // MSS and the receive buffer only shape the connection if set before connect (runtime notes R3).
        const so = this.sockoptFor(plan.bind ? "-B" : bindPort ? "--cport" : pre.mss !== undefined ? "-M" : "-w");
        const raw = so.preparedTcpSocket(this.family, { mss: pre.mss, recvBuffer: pre.recvBuffer }, plan.bind || bindPort ? { host: plan.bind ?? (this.family === "ipv6" ? "::" : "0.0.0.0"), port: bindPort } : undefined);
        so.connectNonBlocking(raw, this.address, plan.port);
        await so.awaitConnected(raw, { host: this.address, port: plan.port });
        s = await this.net.connect<unknown>({ fd: raw, data: undefined, socket: handlers });
      } else {
        s = await connectTcp<unknown>(this.socketEnv(), { host: this.address, port: plan.port }, undefined, {}, undefined, handlers);
      }
    } catch (e) {
      throw new Iperf3ProtocolError(`data connection to ${plan.host}:${plan.port} failed: ${(e as Error).message}`, IErrno.IESTREAMCONNECT, errnoOf(e));
    }
    const cookie = encodeCookie(this.side.start.cookie!);
    const { handed, info: keep, local, congestion, sockBuf } = handTcp(this.fd, s, p);
    const r = this.report(i, sender, local.port);
    if (local.host) r.localHost = plainAddress(local.host);
    this.congestion ??= congestion;
    this.side.start.sockBufs.push(sockBuf);
    // The server starts its clock when the last cookie arrives, so the cookie goes out only once the stream holds
    // the socket: our sender can then start right at TEST_START instead of a Worker hand-off later.
    let plane: DataPlane;
    try {
      plane = await DataPlane.open([onCpu(adoptedTcpSpec(sender ? "send" : "recv", handed, 0, p, clientSendBlocks(p, i)), plan.affinity)], { joinsTest: i > 0 });
    } catch (e) {
      if (keep !== undefined) this.fd.close(keep);
      throw e;
    }
    try {
      // A fresh connection's send buffer always takes the 37 bytes at once.
      const wrote = keep !== undefined ? writeSync(keep, cookie) : s.write(cookie);
      if (wrote !== cookie.length) throw new Error("short write");
    } catch (e) {
      if (keep !== undefined) this.fd.close(keep);
      void plane.stop();
      throw new Iperf3ProtocolError(`could not send the cookie on a data connection: ${(e as Error).message}`, IErrno.IESTREAMWRITE, errnoOf(e));
    }
    this.lastCookieMs = performance.now();
    if (!sender && keep !== undefined) this.fd.close(keep);
    return { report: r, plane, index: 0, infoFd: sender ? keep : undefined, preambleBytes: cookie.length };
  }

  private async openUdp(i: number, sender: boolean): Promise<LiveStream> {
    const p = this.params;
    const plan = this.plan;
    const bindPort = plan.cport ? plan.cport + i : undefined;
    this.side.start.sockBufs.push({ sockBufsize: p.window, sndbufActual: 0, rcvbufActual: 0 });
    if (sender) {
      let plane: DataPlane;
      try {
        plane = await DataPlane.open([onCpu(clientUdpSendSpec(this.address, plan.port, bindPort, p, clientSendBlocks(p, i)), plan.affinity)], { joinsTest: i > 0 });
      } catch (e) {
        throw new Iperf3ProtocolError((e as Error).message, IErrno.IESTREAMREAD, Errno.ETIMEDOUT);
      }
      return { report: this.udpReport(i, true, plane.localPorts[0] ?? 0), plane, index: 0 };
    }
    const plane = await DataPlane.open([onCpu(clientUdpRecvSpec(this.family, bindPort, p), plan.affinity)], { joinsTest: i > 0 });
    // The server's reply to our hello is the first datagram on the socket: that is the handshake.
    await new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => {
        off();
        void plane.stop();
        reject(new Iperf3ProtocolError(`no reply to the UDP hello within ${UDP_HELLO_TIMEOUT_MS / 1000} s`, IErrno.IESTREAMREAD, Errno.ETIMEDOUT));
      }, UDP_HELLO_TIMEOUT_MS);
      const off = plane.onEvent((ev) => {
        if (ev.name !== "connected") return;
        clearTimeout(t);
        off();
        resolve();
      });
      plane.send(0, UDP_HELLO, { host: this.address, port: plan.port });
    });
    return { report: this.udpReport(i, false, plane.localPorts[0] ?? 0), plane, index: 0 };
  }

  /**
   * A UDP stream's socket is the Worker's: its local address is the one the kernel picks toward the server, which is
   * the control connection's own (or -B's). 3.12 prints it, not the wildcard.
   */
  private udpReport(i: number, sender: boolean, localPort: number): LiveStream["report"] {
    const r = this.report(i, sender, localPort);
    const host = this.plan.bind ?? this.fd.localAddress(this.ctrlFd)?.host;
    if (host) r.localHost = plainAddress(host);
    return r;
  }

  /** TEST_START: the clock, the end condition and the interval reports start. */
  private startTest(t0: number): void {
    const p = this.params;
    const side = this.side;
    side.test.streams = this.live.map((s) => s.report);
    side.test.congestionUsed = p.protocol === "tcp" ? this.congestion : undefined;
    side.start.testStart = {
      protocol: p.protocol === "tcp" ? "TCP" : "UDP", numStreams: p.parallel, blksize: p.len, omit: p.omitS, duration: p.timeS,
      bytes: p.bytes, blocks: p.blocks, reverse: p.reverse, tos: p.tos, targetBitrate: p.bandwidth,
    };
    if (this.text && this.plan.output.verbose) {
      const what = p.bytes ? `${p.bytes} bytes to send` : p.blocks ? `${p.blocks} blocks to send` : `${p.timeS} second test`;
      this.out.out(`Starting Test: protocol: ${p.protocol === "tcp" ? "TCP" : "UDP"}, ${p.parallel} streams, ${p.len} byte blocks, omitting ${p.omitS} seconds, ${what}, tos ${p.tos}\n`);
    }
    if (this.stream) this.out.out(jsonStreamLine("start", side.jsonStart()));
    this.cpu.restart();
    const clock = new TestClock({
      run: this.testRun!,
      streams: [...this.live],
      params: p,
      intervalS: this.plan.output.intervalS,
      t0Ms: t0,
      flush: () => this.flushIntervals(),
      // When the end and an interval boundary fall together, end first: its last interval is then the whole one,
      // not a sliver after the boundary (3.12 drops such slivers because its senders stopped; ours may not have yet).
      beforeInterval: (now) => {
        if (clock.endDueMs === undefined || now < clock.endDueMs - 20) return false;
        this.endTest();
        return true;
      },
      atEnd: () => this.endTest(),
    });
    this.clock = clock;
    this.sampler = clock.sampler;
    side.test.senderHasRetransmits = p.protocol === "tcp" && side.test.mode !== "receiver" && this.sampler.hasRetransmits ? 1 : 0;
    if (p.bytes > 0 || p.blocks > 0) {
      // 3.12 ends as soon as the bytes (or blocks) sent or received reach the target; check often (the stock
      // server, sending for -R, stops only on our TEST_END).
      const poll = setInterval(() => {
        if (!this.sampler) return;
        const pr = this.sampler.progress(p.len);
        const hit = p.bytes > 0 ? pr.sent >= p.bytes || pr.received >= p.bytes : pr.sentBlocks >= p.blocks || pr.receivedBlocks >= p.blocks;
        if (hit) this.endTest();
      }, 1);
      this.timers.push(poll as unknown as ReturnType<typeof setTimeout>);
    }
  }

  private flushIntervals(): void {
    const { text, json } = this.side.drainIntervals();
    if (this.text) this.out.out(text);
    if (this.stream) for (const j of json) this.out.out(jsonStreamLine("interval", j));
  }

  /**
   * Our end condition is met. Like 3.12, the senders stop before TEST_END goes out, so the bytes we report sent
   * are the bytes the server can have received: stop them, wait until their counters stand still, then take the
   * last interval and send TEST_END. Receivers keep draining until the end.
   */
  private endTest(): void {
    if (this.ended || !this.sampler) return;
    this.ended = true;
    this.clearTimers();
    const now = performance.now();
    this.side.test.cpu = this.cpu.stop();
    // Senders that already stopped on their -n / -k share need no settling; with none moving, TEST_END goes out
    // at once, so a stock sender (which stops only on TEST_END) sends as little as possible that we do not count.
    const moving = this.live.filter((s) => s.report.sender && s.plane.ends.some((e) => e === undefined));
    const stopped = Promise.all(moving.map((s) => s.plane.stop()));
    // A UDP sender has ended once its socket is closed; a TCP sender ends only when the peer closes too (after the
    // test), so for TCP we wait until the counters stand still instead.
    const udp = this.params.protocol === "udp";
    const quiet = moving.length === 0 ? Promise.resolve() : udp ? Promise.race([stopped, sleepMs(250)]) : settle(this.sampler, this.params.len);
    void quiet.then(() => {
      this.sampler!.finish(now);
      this.flushIntervals();
      this.session?.endTest(performance.now());
      // After TEST_END is out: ending the engine's window reads host counters.
      this.testRun?.endMeasuring();
    });
  }

  private async sendResults(): Promise<void> {
    const p = this.params;
    const side = this.side;
    if (!this.ended) {
      // The server ended the test on its own (it never does in 3.12): count what we have.
      this.ended = true;
      this.clearTimers();
      side.test.cpu = this.cpu.stop();
      this.sampler?.finish(performance.now());
      this.flushIntervals();
    }
    if (this.sampler && this.live.some((s) => !s.report.sender)) {
      // The server has stopped sending (it asks for results only then): what it sent is landing now.
      await settleReceived(this.sampler, p.len);
      this.sampler.recountReceived();
    }
    const shr = side.test.mode === "receiver" ? -1 : p.protocol === "tcp" && this.sampler?.hasRetransmits ? 1 : 0;
    const cpu = side.test.cpu;
    const results = this.sampler
      ? this.sampler.results(cpu, shr, side.test.congestionUsed, false)
      : { cpuUtilTotal: cpu[0], cpuUtilUser: cpu[1], cpuUtilSystem: cpu[2], senderHasRetransmits: shr, streams: [] };
    this.session?.sendResults(results, performance.now());
  }

  private clearTimers(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers = [];
    this.clock?.stop();
  }

  private release(): void {
    this.clearTimers();
    clearInterval(this.tick);
    this.testRun?.finish();
    // The Test closed the TCP_INFO duplicates it read.
    for (const s of this.live) void s.plane.stop();
  }

  /** `summarized`: a test cut short whose summary 3.12 still reports (Ctrl+C, server terminated) keeps its "end". */
  private jsonDoc(error?: string, summarized = false): Parameters<typeof jsonDocumentText>[0] {
    const t = this.side.test;
    const hasEnd = this.sampler !== undefined && this.sampler.stopMs > 0 && (error === undefined || summarized);
    return {
      start: this.side.jsonStart(),
      intervals: this.side.jsonIntervals,
      end: hasEnd ? this.side.jsonEnd() : new Entries([]),
      title: this.params.title,
      extraData: this.params.extraData,
      serverOutputJson: t.getServerOutput ? t.serverOutputJson : undefined,
      serverOutputText: t.getServerOutput && t.serverOutputJson === undefined ? t.serverOutputText : undefined,
      error,
    };
  }

  /** DISPLAY_RESULTS: the report, then "iperf Done.". */
  private finish(): void {
    this.release();
    if (this.json) this.out.out(jsonDocumentText(this.jsonDoc()));
    else if (this.stream) {
      const t = this.side.test;
      if (t.getServerOutput && t.serverOutputJson) this.out.out(jsonStreamLine("server_output_json", t.serverOutputJson as CValue));
      if (t.getServerOutput && t.serverOutputText !== undefined) this.out.out(jsonStreamLine("server_output_text", t.serverOutputText));
      this.out.out(jsonStreamLine("end", this.side.jsonEnd()));
    } else this.out.out(this.side.summaryText() + DONE);
    this.finished(0);
  }

  private fail(message: string, serverTerminated: boolean, interrupted = false): void {
    // A failure or Ctrl+C before the control connection is up (-J reports it in a document) comes before
    // startControl made the report.
    this.side ??= this.makeSide(this.params);
    this.release();
    const partial = this.sampler !== undefined && this.side.test.streams.length > 0;
    if (partial && this.sampler!.stopMs === 0) {
      this.side.test.cpu = this.cpu.stop();
      this.sampler!.finish(performance.now());
      this.flushIntervals();
    }
    if (this.json) {
      this.out.out(jsonDocumentText(this.jsonDoc(interrupted ? "interrupt - the client has terminated" : message, partial && (serverTerminated || interrupted))));
      // 3.12 exits 0 after a -J failure; the error is in the document.
      return this.finished(interrupted ? 1 : 0);
    }
    if (this.stream) {
      this.out.out(jsonStreamLine("error", interrupted ? "interrupt - the client has terminated" : message));
      return this.finished(1);
    }
    if (partial && (serverTerminated || interrupted)) this.out.out(this.side.summaryText());
    this.out.err(interrupted ? "iperf3: interrupt - the client has terminated\n" : `iperf3: error - ${message}\n`);
    this.finished(1);
  }
}

const sleepMs = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Waits until the senders' counters stood still for 20 ms (their Workers took the stop), at most 250 ms. A paced
 * sender pauses between writes, so a shorter quiet spell could be a pause, not the stop.
 */
async function settle(sampler: StreamSampler, len: number): Promise<void> {
  let last = -1;
  let quiet = 0;
  for (let i = 0; i < 62 && quiet < 5; i++) {
    const sent = sampler.progress(len).sent;
    quiet = sent === last ? quiet + 1 : 0;
    last = sent;
    await new Promise((r) => setTimeout(r, 4));
  }
}

export async function runClient(plan: ClientPlan, out: Output, fd: FdTools, signal: AbortSignal, hooks?: ClientHooks): Promise<number> {
  const net = await loadNet();
  return new Iperf3Client(plan, out, fd, net, hooks).run(signal);
}
