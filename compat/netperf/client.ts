import { strerror } from "../../lib/errno.ts";
import { DataPlane } from "../../src/engine/data-plane.ts";
import type { TestRun } from "../../src/engine/test-run.ts";
import { WorkerPool } from "../../src/engine/worker-pool.ts";
import type { Net } from "../../src/net/types.ts";
import { NetperfClientSession, type ClientAction, type ClientDataCounters, type ClientFailure, type ClientRound } from "../../interop/netperf/client-session.ts";
import type { OmniResponse } from "../../interop/netperf/omni-response.ts";
import { OmniFlag } from "../../interop/netperf/constants.ts";
import { OmniResults } from "../../interop/netperf/omni-results.ts";
import { directionName, isRequestResponse, testShape } from "../../interop/netperf/test-request.ts";
import { SocketTransport } from "../../src/net/write-queue.ts";
import { ConfidenceTracker } from "./confidence.ts";
import { connectControl, resolveTest, type ControlSocket } from "./control-connection.ts";
import { cpuCount } from "./cpu-stats.ts";
import { clientCounters, clientSpec, transportRetrans } from "./data-specs.ts";
import { averageFigures, calcThruput, computeFigures, defaultFormat, type CpuStats, type Figures, type LatencyStats, type LocalSockets } from "./figures.ts";
import { InstancesWindow, type CommonCounts } from "./common-window.ts";
import { InterimClock, interimText, interimUnits } from "./interim.ts";
import { combineLatency, latencyStats, type LatencyParts } from "./latency.ts";
import { count as samples } from "../../src/histogram.ts";
import { packetsPerSecond, transactionsPerSecond } from "../../src/formulas.ts";
import { peerName, phaseSoFar, runDataPhase } from "./test-runs.ts";
import { topHeader } from "./legacy-output.ts";
import { reportText } from "./omni-report.ts";
import { omniSetup, socketsAtEnd, type OmniSetup } from "./omni-setup.ts";
import type { NetperfPlan } from "./plan.ts";
import { tcpInfoDump, transportMss, wantsTcpInfoDump } from "./tcp-info-dump.ts";

/**
 * `anyperf netperf`: drives a netserver (stock or ours) through NetperfClientSession, runs the data phase on the
 * engine, and prints what netperf 2.7.0 prints. `--instances N` runs N such tests at once in this process, prints
 * each, then their sum.
 */

export interface ClientIo {
  net: Net;
  out(text: string): void;
  err(text: string): void;
  signal: AbortSignal;
  /** Each data phase's Test, as it starts (a front end other than `anyperf netperf` reports from it). */
  onRun?(run: TestRun): void;
}

export interface InstanceResult {
  exitCode: number;
  stdout: string;
  stderr: string;
  figures?: Figures;
  /** Datagrams per second sent by us and received by the server (UDP_STREAM). */
  sentPps?: number;
  /** The last round's latency histogram and totals (tests that time transactions). */
  latency?: LatencyParts;
  receivedPps?: number;
  /** The netserver's results of the last round: its counts, elapsed time, CPU and socket sizes. */
  remote?: ClientRound["results"];
}

const RESPONSE_TIMEOUT_MS = 120_000;
const CLOSE_TIMEOUT_MS = 60_000;
/** After a signal cut the data phase: how long the netserver has to send its results before we stop waiting. */
const GIVE_UP_MS = 2_000;

/** One netperf test: control connection, rounds, output text. */
class Instance {
  /** Standard output kept for the end (with --instances); a lone test prints as it goes, as netperf does. */
  private out = "";
  private errText = "";
  private control: ControlSocket | undefined;
  private session!: NetperfClientSession;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private giveUp: ReturnType<typeof setTimeout> | undefined;
  /** The netserver answered the test request (the data phase began). */
  private answered = false;
  private plane: DataPlane | undefined;
  private readonly figures: Figures[] = [];
  private readonly setup: OmniSetup;
  private lastLatency: LatencyStats | undefined;
  private latencyParts: LatencyParts | undefined;
  private lastRound: ClientRound | undefined;
  private done!: (code: number) => void;
  private readonly finished = new Promise<number>((r) => (this.done = r));
  private readonly uuid = crypto.randomUUID();
  private readonly cpus = cpuCount();
  private pps: { sent: number; received: number } | undefined;
  private readonly confidence: ConfidenceTracker | undefined;
  private readonly interim: InterimClock | undefined;

  constructor(
    private readonly plan: NetperfPlan,
    private readonly io: ClientIo,
    /** The control host, resolved. */
    private readonly remoteIp: string,
    private readonly dataFamily: "ipv4" | "ipv6",
    private readonly live: boolean,
    /** With --instances: the window all instances' data phases share. */
    private readonly common?: InstancesWindow,
  ) {
    if (plan.iterationMax > 1) this.confidence = new ConfidenceTracker(plan.confidenceLevel, plan.confidenceInterval, plan.resultConfidenceOnly);
    if (plan.demoIntervalS !== undefined) this.interim = new InterimClock(performance.now());
    this.setup = omniSetup(plan, dataFamily);
    this.localSockets = this.setup.localSockets;
  }

  async run(): Promise<InstanceResult> {
    const { plan, io } = this;
    this.session = new NetperfClientSession(
      {
        write: (b) => this.control && new SocketTransport(this.control).write(b),
        close: () => this.control?.end(),
        act: (a) => this.act(a),
      },
      {
        request: this.setup.request,
        rounds: plan.iterationMax,
        another: (done) => this.roundDone(done),
        passphrase: plan.passphrase,
        responseTimeoutMs: RESPONSE_TIMEOUT_MS,
        closeTimeoutMs: CLOSE_TIMEOUT_MS,
      },
    );
    const control = await connectControl(io, plan, this.remoteIp, { data: (d) => this.controlData(d), closed: () => this.controlClosed() }, {
      out: (t) => this.print(t),
      err: (t) => void (this.errText += t),
    });
    if (typeof control === "number") return { exitCode: control, stdout: this.out, stderr: this.errText };
    this.control = control;
    if (plan.printHeaders) this.print(this.header());
    // During the data phase a signal ends it and the results exchange follows; a netserver that has not answered the
    // test request, or sends no results within GIVE_UP_MS after that, no longer holds the run for its 120 s timeout.
    const onAbort = () => {
      if (this.plane) void this.plane.stop();
      this.giveUp = setTimeout(() => this.noResults(), this.answered ? GIVE_UP_MS : 0);
    };
    io.signal.addEventListener("abort", onAbort, { once: true });
    this.session.start(performance.now());
    this.schedule();
    const code = await this.finished;
    io.signal.removeEventListener("abort", onAbort);
    if (this.timer) clearTimeout(this.timer);
    if (this.giveUp) clearTimeout(this.giveUp);
    return {
      exitCode: code,
      stdout: this.out,
      stderr: this.errText,
      figures: this.figures.length > 0 ? averageFigures(this.figures) : undefined,
      sentPps: this.pps?.sent,
      receivedPps: this.pps?.received,
      latency: this.latencyParts,
      remote: this.lastRound?.results,
    };
  }

  /**
   * Interrupted, and the netserver sent no results in time (for TCP_CRR it runs its padded timer out: 4 s past -l).
   * A request/response test's figures are this side's transactions over this side's time, so what was measured is
   * still printed, with no remote figures; a stream test's throughput is the netserver's count, so nothing is.
   */
  private noResults(): void {
    const { plan } = this;
    const where = `the netserver at ${plan.host} port ${plan.controlPort}`;
    if (!this.localRound || !isRequestResponse(plan.test)) {
      this.errText += `netperf: interrupted; ${where} had not answered\n`;
      this.done(1);
      return;
    }
    this.errText += `netperf: interrupted; ${where} sent no results within ${GIVE_UP_MS / 1000} s: the figures are this side's alone\n`;
    // The session's view of the closing connection (or results that come later) changes nothing from here.
    this.reported = true;
    this.control?.terminate();
    const { response, local } = this.localRound;
    const round: ClientRound = { response: { ...response, flags: response.flags & ~OmniFlag.MEASURE_CPU }, results: OmniResults.parse({}), local };
    this.roundDone([round]);
    this.report([round]);
    this.done(0);
  }

  private reported = false;

  /** The round's response and this side's counts, once its data phase is over. */
  private localRound: Omit<ClientRound, "results"> | undefined;

  private print(text: string): void {
    if (this.live) this.io.out(text);
    else this.out += text;
  }

  private controlData(bytes: Uint8Array): void {
    this.session.receive(bytes, performance.now());
    this.schedule();
  }

  private controlClosed(): void {
    this.session.controlClosed(performance.now());
  }

  private schedule(): void {
    if (this.timer) clearTimeout(this.timer);
    const at = this.session.nextDeadlineMs();
    if (at === undefined) return;
    this.timer = setTimeout(() => {
      this.session.tick(performance.now());
      this.schedule();
    }, Math.max(0, at - performance.now()));
  }

  private header(): string {
    return headerFor(this.plan, this.remoteIp, this.dataFamily);
  }

  private act(a: ClientAction): void {
    if (this.reported) return;
    switch (a.kind) {
      case "start-data":
        this.answered = true;
        this.response = a.response;
        void this.dataPhase(a.response.dataPort).catch((e: unknown) => this.localFailure(e));
        return;
      case "abort-data":
        if (this.plane) void this.plane.stop();
        return;
      case "shutdown-write":
        this.control?.end();
        return;
      case "finished":
        this.report(a.rounds);
        this.done(0);
        return;
      case "failed":
        this.fail(a.failure);
        return;
    }
  }

  private fail(f: ClientFailure): void {
    if (this.plane) void this.plane.stop();
    switch (f.kind) {
      case "remote-errno":
        // netperf: the message on stdout without a newline, then perror's text on stderr; exit status 255.
        this.print(`netperf: remote error ${f.errno}`);
        this.errText += `${strerror(f.errno)}\n`;
        this.done(255);
        return;
      case "timeout":
        this.errText += "recv_response_timed_n: no response received. errno 0 counter 0\n";
        this.done(1);
        return;
      case "closed":
        this.errText += f.partialBytes > 0 ? `recv_response: partial response received: ${f.partialBytes} bytes\n` : "recv_response: Connection reset by peer\n";
        this.done(1);
        return;
      case "protocol":
        this.errText += `netperf: ${f.detail}\n`;
        this.done(1);
        return;
    }
  }

  private localFailure(e: unknown): void {
    this.errText += `netperf: send_omni: connect_data_socket failed: ${e instanceof Error ? e.message : String(e)}\n`;
    this.control?.terminate();
    this.done(1);
  }

  private async dataPhase(dataPort: number): Promise<void> {
    const { plan } = this;
    if (plan.waitSeconds > 0) await new Promise((r) => setTimeout(r, plan.waitSeconds * 1000));
    const count = plan.testLength < 0 ? -plan.testLength : 0;
    const plane = await DataPlane.open([
      clientSpec({
        test: plan.test,
        dataHost: plan.remoteDataAddress ?? this.remoteIp,
        dataPort,
        family: this.dataFamily,
        localAddress: plan.localDataAddress,
        localPort: plan.localDataPort,
        sendSize: Math.max(1, this.setup.sendCall),
        recvSize: Math.max(1, this.setup.recvCall),
        requestSize: plan.requestSize,
        responseSize: plan.responseSize,
        firstBurst: plan.firstBurst,
        count,
        sendBuffer: plan.socketBuffers.local.send > 0 ? plan.socketBuffers.local.send : undefined,
        recvBuffer: plan.socketBuffers.local.recv > 0 ? plan.socketBuffers.local.recv : undefined,
        noDelay: plan.noDelay,
        keepAlive: plan.keepAlive,
        cork: plan.cork,
        mss: plan.transportMss > 0 ? plan.transportMss : undefined,
        congestion: plan.congestion.local || undefined,
        tos: plan.socketTos.local > 0 ? plan.socketTos.local : undefined,
        timeCalls: this.setup.blocks.flat().some((s) => /^(MIN|MAX|MEAN|STDDEV|P\d+)_LATENCY$/.test(s.name)),
      }),
    ]);
    this.plane = plane;
    const openedAtMs = performance.now();
    const s = testShape(plan.test);
    const shape = { protocol: s.protocol, sends: s.clientSends, receives: s.clientReceives, connectPerTransaction: s.connectPerTransaction };
    const peer = peerName(plan.remoteDataAddress ?? this.remoteIp, dataPort);
    const phase = await runDataPhase(plane, { plan, signal: this.io.signal, peer, shape, openedAtMs, common: this.common }, (run) => {
      this.io.onRun?.(run);
      return this.interimLines(run, plane);
    });
    const snap = phase.counters;
    const elapsedS = phase.elapsedS;
    const local: ClientDataCounters = clientCounters({ ...plan, sendSize: this.setup.sendCall }, snap, elapsedS);
    // A stream test's timed calls are its histogram's samples; a request/response test's are its transactions.
    const timed = isRequestResponse(plan.test) ? snap : { ...snap, transactions: samples(snap.histogram) };
    this.lastLatency = latencyStats(timed);
    if (this.lastLatency) this.latencyParts = timed;
    this.localCpuStats = phase.localCpu;
    this.localSockets = socketsAtEnd(this.setup.localSockets, phase.buffers);
    if (plan.test === "UDP_STREAM") this.localPackets = snap.packets;
    this.localRetrans = transportRetrans(shape, snap);
    const info = plane.lastTcpInfo(0);
    this.transportMss = transportMss(shape.protocol, info);
    // netperf reads TCP_INFO where it reads the retransmits: never for UDP, nor for TCP_CRR's closed socket.
    if (info && this.localRetrans !== -1 && wantsTcpInfoDump(process.env)) this.errText += tcpInfoDump(info);
    this.plane = undefined;
    if (this.response) this.localRound = { response: this.response, local };
    this.session.dataDone(local, performance.now());
    this.schedule();
  }

  private response: OmniResponse | undefined;
  private localCpuStats: CpuStats | undefined;
  /** This side's sockets, their final sizes read as each data phase ends. */
  private localSockets: LocalSockets;
  private localPackets = 0;
  private localRetrans = -1;
  private transportMss = -1;

  /** Demo mode (-D): the interval's rate, printed while the test runs and once more as it ends. */
  private interimLines(run: TestRun, plane: DataPlane): () => void {
    const timer = this.interim && this.plan.demoIntervalS !== undefined ? setInterval(() => this.interimTick(run, plane), this.plan.demoIntervalS * 1000) : undefined;
    if (timer) this.interim!.restart(performance.now());
    return () => {
      clearInterval(timer);
      this.interimTick(run, plane);
    };
  }

  private interimTick(run: TestRun, plane: DataPlane): void {
    const c = phaseSoFar(run, plane);
    if (!this.interim || !c) return;
    const { plan } = this;
    const libfmt = defaultFormat(plan.test, plan.format);
    const units = interimUnits(plan.test, libfmt, c, plan.requestSize, plan.responseSize);
    const line = this.interim.tick(units, performance.now(), Date.now());
    if (line) this.print(interimText(plan.output, libfmt, line));
  }

  /** A round's figures, as soon as its results are in; with -i, whether netperf would run another round. */
  private roundDone(done: readonly ClientRound[]): boolean {
    const { plan } = this;
    const r = done[done.length - 1]!;
    const f = computeFigures({
      test: plan.test,
      format: plan.format,
      firstBurst: plan.firstBurst,
      local: r.local,
      localSendSize: this.setup.sendSize,
      localRecvSize: this.setup.recvSize,
      sockets: this.localSockets,
      response: r.response,
      results: r.results,
      localCpu: this.localCpuStats,
      localCpuCount: this.cpus,
      latency: this.lastLatency,
    });
    this.figures.push(f);
    if (!this.confidence) return true;
    this.confidence.add(f);
    return this.confidence.wantsAnother(plan.iterationMin, plan.iterationMax);
  }

  private report(rounds: ClientRound[]): void {
    const { plan } = this;
    const last = rounds[rounds.length - 1]!;
    this.lastRound = last;
    const f = averageFigures(this.figures);
    if (plan.test === "UDP_STREAM") {
      this.pps = { sent: packetsPerSecond(this.localPackets, f.elapsed), received: packetsPerSecond(last.results.recvCalls, f.elapsed) };
    }
    this.print(
      reportText(plan, {
        setup: this.setup,
        sockets: this.localSockets,
        f,
        last,
        iterations: this.figures.length,
        confidence: this.confidence,
        cpus: this.cpus,
        dataFamily: this.dataFamily,
        localRetrans: this.localRetrans,
        transportMss: this.transportMss,
        uuid: this.uuid,
      }),
    );
  }
}

/** The titles of the tests netperf 2.7.0 runs with its classic messages. */
const CLASSIC_TITLES: Record<string, string> = { TCP_MSS: "TCP MSS TEST", TCP_CC: "TCP Connect/Close TEST", TCP_SENDFILE: "TCP SENDFILE TEST" };

/** netperf's top header line for a test to the resolved control address. */
export function headerFor(plan: NetperfPlan, remoteIp: string, dataFamily: "ipv4" | "ipv6"): string {
  const wildcard = dataFamily === "ipv6" ? "::" : "0.0.0.0";
  const local = plan.localDataAddress ?? wildcard;
  const classic = CLASSIC_TITLES[plan.testName];
  return topHeader({
    test: plan.test,
    title: plan.omni ? `OMNI ${directionName(plan.test)} TEST` : classic,
    // The classic tests name the IPv6 wildcard "::0" (their default local host name).
    localName: classic && plan.localDataAddress === undefined && dataFamily === "ipv6" ? "::0" : local,
    localAddress: local,
    localPort: plan.localDataPort,
    localFamily: dataFamily,
    remoteName: plan.remoteDataAddress ?? plan.host,
    remoteAddress: plan.remoteDataAddress ?? remoteIp,
    remotePort: plan.remoteDataPort,
    remoteFamily: dataFamily,
    iterationMax: plan.iterationMax,
    confidenceInterval: plan.confidenceInterval,
    confidenceLevel: plan.confidenceLevel,
    noDelay: plan.noDelay,
    copyAvoidance: false,
    firstBurst: plan.firstBurst,
    cpuBind: plan.cpuAffinity.local !== -1 || plan.cpuAffinity.remote !== -1,
  });
}

/** One test. `live`: print standard output as it comes instead of returning it. */
export async function runInstance(plan: NetperfPlan, io: ClientIo, live = false, common?: InstancesWindow): Promise<InstanceResult> {
  const failed = (failure: string): InstanceResult => {
    if (live) io.out(failure);
    return { exitCode: 255, stdout: live ? "" : failure, stderr: "" };
  };
  const r = await resolveTest(plan);
  if ("failure" in r) return failed(r.failure);
  return new Instance(r.plan, io, r.ip, r.dataFamily, live, common).run();
}

/**
 * The lines after N instances: the sum of each one's main figure (trans/s for RR, pps for UDP_STREAM), then the same
 * figure over the window where all of them ran (common-window.ts), which the sum overstates when their windows
 * differ.
 */
export function aggregateText(plan: NetperfPlan, results: InstanceResult[], common: CommonCounts | undefined): string {
  const ok = results.filter((r) => r.exitCode === 0 && r.figures);
  const sum = (f: (r: InstanceResult) => number) => ok.reduce((s, r) => s + f(r), 0);
  const units = ok[0]?.figures?.unitsText ?? "";
  let line = `Aggregate of ${results.length} instances of ${plan.test} to ${plan.host} (${ok.length} completed, ${results.length - ok.length} failed): `;
  if (isRequestResponse(plan.test) && (ok[0]?.figures?.libfmt ?? "x") === "x") {
    line += `${sum((r) => r.figures!.transactionRate).toFixed(2)} Trans/s`;
  } else {
    line += `${sum((r) => r.figures!.thruput).toFixed(2)} ${units}/sec`;
  }
  if (plan.test === "UDP_STREAM") {
    line += `, ${sum((r) => r.sentPps ?? 0).toFixed(2)} packets/s sent, ${sum((r) => r.receivedPps ?? 0).toFixed(2)} packets/s received`;
  }
  line += `\n${commonWindowText(plan, results.length, common, ok[0]?.figures?.libfmt, units)}`;
  const timed = ok.flatMap((r) => (r.latency ? [r.latency] : []));
  const l = timed.length > 0 ? latencyStats(combineLatency(timed)) : undefined;
  if (!l) return `${line}\n`;
  // Every transaction of every instance, as if one test had timed them all.
  return `${line}\nLatency of ${timed.length} instances of ${plan.test} (usec): min ${l.min} mean ${l.mean.toFixed(2)} p50 ${l.p50} p90 ${l.p90} p99 ${l.p99} max ${l.max} stddev ${l.stddev.toFixed(2)}\n`;
}

/** The aggregate over the common window, in the sum's units; or why there is none. */
function commonWindowText(plan: NetperfPlan, n: number, c: CommonCounts | undefined, libfmt: string | undefined, units: string): string {
  if (!c || c.seconds <= 0) return `No window in which all ${n} instances ran: one ended or failed before the last one started; the sum above adds rates over windows that do not overlap`;
  const head = `Over the ${c.seconds.toFixed(2)} s in which all ${n} instances ran: `;
  const tail = "; the sum above adds each instance's rate over its own window";
  if (isRequestResponse(plan.test) && (libfmt ?? "x") === "x") return `${head}${transactionsPerSecond(c.transactions, c.seconds).toFixed(2)} Trans/s${tail}`;
  return `${head}${calcThruput(c.bytes, c.seconds, libfmt ?? "m").toFixed(2)} ${units}/sec${tail}`;
}

export async function runNetperf(plan: NetperfPlan, io: ClientIo): Promise<number> {
  // The data Workers start up while the control connection is set up.
  WorkerPool.shared();
  if (plan.instances === 1) {
    const r = await runInstance(plan, io, true);
    io.err(r.stderr);
    return r.exitCode;
  }
  const common = new InstancesWindow(plan.instances);
  const results = await Promise.all(Array.from({ length: plan.instances }, () => runInstance(plan, io, false, common)));
  for (const r of results) {
    io.out(r.stdout);
    io.err(r.stderr);
  }
  io.out(aggregateText(plan, results, common.result()));
  return results.every((r) => r.exitCode === 0) ? 0 : (results.find((r) => r.exitCode !== 0)?.exitCode ?? 1);
}
