/**
 * One test on the iperf3 server: its control session's events drive the test — the limits, the streams
 * (server-streams.ts), the test clock (test-clock.ts, shared with the client), the end and the report.
 */
import { TestRun } from "../../src/engine/test-run.ts";
import { authorizer } from "./auth-files.ts";
import type { TcpSocket } from "../../src/net/types.ts";
import { IErrno, describeIperfError } from "../../interop/iperf3/error-codes.ts";
import { Errno } from "../../lib/errno.ts";
import { Iperf3ProtocolError } from "../../interop/iperf3/framing.ts";
import { streamCount, type TestParams } from "../../interop/iperf3/params.ts";
import type { Results } from "../../interop/iperf3/results.ts";
import { ServerSession, type ServerEvent } from "../../interop/iperf3/server-session.ts";
import type { QueuedWriter } from "../../src/net/queued-writer.ts";
import { checkTest, rateExceeded } from "../../src/access/server-policy.ts";
import { jsonDocumentText, jsonDocumentValue } from "./json-report.ts";
import type { ServerPlan } from "./plan.ts";
import { RateWatch } from "./rate-watch.ts";
import { settleReceived, type LiveStream, type StreamSampler } from "./sampler.ts";
import type { Iperf3Server } from "./server.ts";
import { TestText } from "./server-output.ts";
import { ServerStreams } from "./server-streams.ts";
import { CpuWindow, IPERF_VERSION_STRING, SideReport, modeOf, plainAddress, systemInfo, testRunPeer } from "./side.ts";
import { TestClock } from "./test-clock.ts";
import { acceptedLine, connectedLine } from "./text-report.ts";
import { atTime } from "./timers.ts";

/**
 * 3.12's i_errno for "test duration too long" and "number of parallel streams too large": a stock client prints
 * those words (with its own compiled-in maximum); our log line names the real limit and its flag.
 */
const IENUMSTREAMS = 6;
const IEDURATION = 5;
const REFUSAL_ERRNO: Record<string, number> = { streams: IENUMSTREAMS, duration: IEDURATION, rate: IErrno.IETOTALRATE };
const TICK_MS = 100;
/** 3.12's words when Ctrl+C or SIGTERM ends the server (iperf_got_sigend with IESERVERTERM). */
export const INTERRUPTED = "interrupt - the server has terminated";

/** What a test holds from PARAM_EXCHANGE on. */
interface Prepared {
  params: TestParams;
  side: SideReport;
  run: TestRun;
  streams: ServerStreams;
}

export class ServerTest {
  readonly session: ServerSession;
  cookie?: string;
  private t?: Prepared;
  private clock?: TestClock;
  private rate?: RateWatch;
  private readonly cpu = new CpuWindow();
  private readonly tick: ReturnType<typeof setInterval>;
  /** A timed test's senders stop at its end on our clock (armSendEnd). */
  private sendEnd?: { stop(): void };
  private readonly text: TestText;
  private lastBytes = -1;
  private lastDataMs = 0;
  private closed = false;
  /** The client's credentials were refused: a -1 server goes on listening, as 3.x does. */
  loginRefused = false;
  /** Why this server refused the test (a limit), for our own error line. */
  private refusal?: string;
  private readonly peer: { host: string; port: number };

  constructor(
    private readonly server: Iperf3Server,
    private readonly socket: TcpSocket<unknown>,
    writer: QueuedWriter,
  ) {
    const plan = server.plan;
    this.peer = { host: plainAddress(socket.remoteAddress ?? ""), port: socket.remotePort ?? 0 };
    this.text = new TestText(plan.output.json, () => server.holdsOutput(this), (t) => server.out.out(t));
    this.session = new ServerSession(writer, (e) => this.onEvent(e), {
      nowMs: performance.now(),
      idleTimeoutMs: plan.rcvTimeoutMs,
      maxDurationS: server.limits.maxDurationS?.value ?? 0,
      // Requested rates are checked in prepare() (our message names the flag); measured rates in onTick().
      bitrateLimit: 0,
      authorize: plan.auth && authorizer(plan.auth),
    });
    this.tick = setInterval(() => this.onTick(), TICK_MS);
  }

  get params(): TestParams | undefined {
    return this.t?.params;
  }

  private get plan(): ServerPlan {
    return this.server.plan;
  }

  private get sampler(): StreamSampler | undefined {
    return this.clock?.sampler;
  }

  private onTick(): void {
    const now = performance.now();
    if (this.sampler && this.session.phase === "running") {
      const pr = this.sampler.progress(this.t!.params.len);
      const b = pr.sent + pr.received;
      if (b !== this.lastBytes) {
        this.lastBytes = b;
        this.lastDataMs = now;
      }
      this.checkMeasuredRate(now);
    }
    this.session.tick(now, this.lastDataMs || undefined);
  }

  /** The rate limit also holds for tests that asked for none (unlimited TCP): see RateWatch. */
  private checkMeasuredRate(now: number): void {
    const limit = this.server.limits.maxRateBps;
    const r = limit && this.rate?.look(now);
    if (!limit || !r || r.bps <= limit.value) return;
    this.refuse(rateExceeded(limit, r.bps, Math.round(r.seconds * 10) / 10), IErrno.IETOTALRATE);
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
        // iperf3's own --server-max-duration works as 3.20's: omitted seconds count, a test with no time bound (-n,
        // -k) is refused, and the client hears i_errno 37. The global --max-duration keeps 3.12's IEDURATION words.
        const own = this.server.limits.maxDurationS?.flag === "--server-max-duration";
        const no = checkTest(this.server.limits, {
          streams,
          durationS: own ? (p.timeS > 0 ? p.timeS + p.omitS : Infinity) : p.bytes > 0 || p.blocks > 0 ? undefined : p.timeS,
          rateBps: p.bandwidth > 0 ? p.bandwidth * streams : undefined,
        });
        if (no) return this.refuse(no.message, own && no.limit === "duration" ? IErrno.IEMAXSERVERTESTDURATIONEXCEEDED : REFUSAL_ERRNO[no.limit]!);
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
    const mode = modeOf(p, "server");
    const tcpSender = p.protocol === "tcp" && mode !== "receiver";
    const side = new SideReport(
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
    this.text.say(acceptedLine(this.peer.host, this.peer.port));
    const run = new TestRun(
      { mode: "iperf3", role: "server", peer: testRunPeer(this.peer), transport: p.protocol, test: "stream" },
      { warmupS: 0, durationS: p.bytes || p.blocks ? 0 : p.timeS, cooldownS: 0, intervalS: this.plan.output.intervalS || 1 },
    );
    const streams = new ServerStreams({ server: this.server, session: this.session, params: p, side, run, peer: this.peer, controlLocal: this.socket.localAddress });
    this.t = { params: p, side, run, streams };
    if (p.protocol === "tcp" && p.mss) {
      try {
        this.server.holdListenerMss(this, p.mss);
      } catch (e) {
        return this.session.fail(e as Iperf3ProtocolError);
      }
    }
    streams.listen(now);
  }

  /** A TCP data connection with our cookie, while the test creates its streams. */
  addTcpStream(s: TcpSocket<unknown>, pending: number): void {
    this.t?.streams.addTcp(s, pending);
  }

  private async begin(): Promise<void> {
    const t = this.t!;
    const streams = await t.streams.ready();
    if (this.closed || this.session.phase !== "starting") return;
    const { params: p, side, run } = t;
    for (const s of streams) this.text.say(connectedLine(s.report));
    side.test.streams = streams.map((s) => s.report);
    side.test.congestionUsed = p.protocol === "tcp" ? t.streams.congestion : undefined;
    const now = performance.now();
    this.cpu.restart();
    // The clock (and the Test's window) starts before TEST_START goes out, so no byte the client sends on it falls before.
    this.clock = new TestClock({ run, streams, params: p, intervalS: this.plan.output.intervalS, t0Ms: now, flush: () => this.flushIntervals() });
    // 3.12's server reports retransmits when it sends TCP and can read TCP_INFO; it prints before it hears the client.
    side.test.senderHasRetransmits = p.protocol === "tcp" && side.test.mode !== "receiver" && this.clock.sampler.hasRetransmits ? 1 : 0;
    this.rate = new RateWatch(run, streams, this.plan.bitrateLimitIntervalS);
    this.lastDataMs = now;
    this.session.begin(now);
    for (const pl of new Set(streams.map((s) => s.plane))) pl.go();
    this.armSendEnd(now, streams);
  }

  /**
   * A timed test's senders stop at its end on our clock, which started a little before the client's: what we send
   * while the client's TEST_END is on its way, the client, done counting, never reads. 3.12's server, one C
   * thread, notices TEST_END within microseconds; our main thread may take milliseconds, and at hundreds of Mbit/s
   * in 128 KiB blocks (or 32 KiB datagrams) that is several blocks sent but never received.
   */
  private armSendEnd(now: number, streams: LiveStream[]): void {
    const p = this.t!.params;
    const senders = streams.filter((s) => s.report.sender);
    if (p.timeS <= 0 || p.bytes > 0 || p.blocks > 0 || senders.length === 0) return;
    this.sendEnd = atTime(now + (p.omitS + p.timeS) * 1000, () => {
      for (const s of senders) void s.plane.stop();
    });
  }

  private flushIntervals(): void {
    if (!this.t) return;
    const { text } = this.t.side.drainIntervals();
    if (!this.plan.output.json) this.text.say(text);
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
    const streams = this.t?.streams.streams ?? [];
    if (this.sampler && streams.length > 0) {
      // Our senders stop counting now; only what the client sent may still arrive.
      this.sampler.freeze((s) => s.report.sender);
      const sent = Promise.all(streams.filter((s) => s.report.sender).map((s) => s.plane.stop()));
      if (streams.some((s) => !s.report.sender)) await settleReceived(this.sampler, this.t!.params.len);
      await sent;
      this.t?.streams.finishSending();
    }
    if (this.closed) return;
    this.finishStop(now, cpu);
  }

  private finishStop(now: number, cpu: [number, number, number]): void {
    const { params: p, side, run, streams } = this.t!;
    side.test.cpu = cpu;
    if (this.sampler) {
      this.sampler.finish(now);
      this.flushIntervals();
    }
    // After the time-critical freeze above and the last interval's cut: ending the engine's window reads host counters.
    run.endMeasuring();
    streams.stop();
    const shr = side.test.mode === "receiver" ? -1 : p.protocol === "tcp" && this.sampler?.hasRetransmits ? 1 : 0;
    const results: Results = this.sampler
      ? this.sampler.results(cpu, shr, side.test.congestionUsed, true)
      : { cpuUtilTotal: cpu[0], cpuUtilUser: cpu[1], cpuUtilSystem: cpu[2], senderHasRetransmits: shr, streams: [] };
    if (this.plan.output.json) {
      if (p.getServerOutput) results.serverOutputJson = jsonDocumentValue(this.jsonDoc());
    } else {
      this.text.say(side.summaryText());
      if (p.getServerOutput) results.serverOutputText = this.text.all;
    }
    this.session.stopped(results, now);
  }

  private jsonDoc(error?: string) {
    const side = this.t!.side;
    return { start: side.jsonStart(), intervals: side.jsonIntervals, end: side.jsonEnd(), error };
  }

  private stopTimers(): void {
    this.clock?.stop();
    this.sendEnd?.stop();
    this.sendEnd = undefined;
  }

  private abort(clientTerminated: boolean, iErrno: number, errno: number, detail: string): void {
    if (this.closed) return;
    this.loginRefused = iErrno === IErrno.IEAUTHTEST;
    this.stopTimers();
    // Like 3.12 on CLIENT_TERMINATE: the summary of what was measured, then the reason.
    if (this.sampler && this.t && this.sampler.stopMs === 0) {
      this.t.side.test.cpu = this.cpu.stop();
      this.sampler.finish(performance.now());
      this.flushIntervals();
      if (!this.plan.output.json) this.text.say(this.t.side.summaryText());
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
    this.t?.streams.close();
    this.t?.run.finish();
    let block: string;
    if (this.plan.output.json) block = this.t ? jsonDocumentText(this.jsonDoc(error)) : errorLine;
    else block = this.text.unprinted + errorLine;
    this.server.finishedTest(this, block);
  }
}
