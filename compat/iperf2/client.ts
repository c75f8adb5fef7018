import { DataPlane } from "../../src/engine/data-plane.ts";
import { UserError } from "../../src/errors.ts";
import { Interrupted, unlessAborted } from "../../src/signals.ts";
import type { TcpSocket } from "../../src/net/types.ts";
import type { SocketOptions, StreamSpecInput, TcpSendSpecInput, UdpSendSpecInput } from "../../src/stream-spec.ts";
import { encodeClientHeader } from "../../interop/iperf2/client-header.ts";
import { type ClientRequestInput, buildClientHeader } from "../../interop/iperf2/client-request.ts";
import { digitsPayload } from "../../interop/iperf2/datagram.ts";
import { TCP_BURST_HEADER, TCP_BURST_STAMPS, tcpBurstTemplate } from "../../interop/iperf2/tcp-burst.ts";
import { REPORT_MIN_LENGTH, type ServerReport, decodeServerReport } from "../../interop/iperf2/server-report.ts";
import { UdpClientSession } from "../../interop/iperf2/udp-client-session.ts";
import { ISOCH_PAYLOAD } from "../../interop/iperf2/isoch-frames.ts";
import { runBouncebackClient } from "./bounceback-client.ts";
import { runConnectOnly } from "./connect-only.ts";
import { ConnectBackListener } from "./connect-back.ts";
import { type Member, ReportGroup } from "./groups.ts";
import { iperf2Test } from "./iperf2-test.ts";
import type { TestRun } from "../../src/engine/test-run.ts";
import { localAddressToward } from "./local-address.ts";
import type { ClientPlan } from "./plan.ts";
import { defaultBuffers, setBuffers } from "../../src/host/socket-defaults.ts";
import { connectionNotes, wallClockText, withInterface } from "./connection-notes.ts";
import { secondsUntilStart } from "../../src/formulas.ts";
import { type Handed, connectMain, handToWorker, initialTcp, openOnHanded, resolveHost } from "./tcp-connect.ts";
import type { ServerIo } from "./tcp-server.ts";
import type { TcpInit } from "./tcp-stats.ts";
import { type Endpoint, clientBanner, connectionLine, reportedLine, serverReportLine } from "./text-report.ts";
import { wallSeconds } from "./udp-reverse-sender.ts";
import { sleep, within } from "./waits.ts";
import type { Printer } from "./printer.ts";
import { strerror } from "../../src/sockopt/errno.ts";
import { histogramsBanner } from "./write-times.ts";

/** -R / UDP -R: the server ends the test; give up this long after the requested duration. */
const REVERSE_GRACE_MS = 10_000;
/** UDP -R: how often a stream whose server stream has not begun sends its request again. */
const REQUEST_AGAIN_MS = 250;
/** Datagrams per send call: small bursts, because a stock server at its default 208 KB buffer drops long ones. */
const UDP_BATCH = 8;

export interface ClientIo extends ServerIo {
  /** The test's Test, as it starts (a front end other than `anyperf iperf` reports from it). */
  onRun?(run: TestRun): void;
  /** A UDP stream's server report (stream from 0), as it arrives. */
  onServerReport?(stream: number, report: ServerReport): void;
}

/** How long a stop may wait for the server's FIN once a signal ended the test, and at most otherwise. */
const STOP_AFTER_SIGNAL_MS = 1_000;
const STOP_BOUND_MS = 15_000;
/** setTimeout's largest delay (about 24.8 days): a byte-limited test waits for its end, or for a signal. */
const MAX_TIMER_MS = 2 ** 31 - 1;

function request(plan: ClientPlan): ClientRequestInput {
  return {
    transport: plan.udp ? "udp" : "tcp",
    direction: plan.fullDuplex ? "full-duplex" : plan.reverse ? "reverse" : "forward",
    connectBack: plan.dual ? "dual" : plan.tradeoff ? "tradeoff" : "none",
    amount: plan.amount,
    rate: plan.rate?.value ?? 0,
    rateUnits: plan.rate?.units ?? "bps",
    // Stock's header carries 0 unless -l was given.
    bufLen: plan.lenSet ? plan.len : 0,
    numThreads: plan.parallel,
    listenPort: plan.listenPort ?? plan.port,
    tos: plan.tos,
    peerDetect: plan.peerDetect,
    noUdpFin: plan.noUdpFin,
    extended: !plan.compat,
    tripTimes: plan.tripTimes,
    isochronous: plan.isochronous !== undefined,
    tcpQuickAck: plan.tcpQuickAck,
    // A TCP --isochronous header carries the start time too (its tail, as 2.1.8's).
    ...(plan.tripTimes || plan.isochronous ? { tripStart: secUsec(Date.now() / 1000) } : {}),
    ...(plan.txStartS !== undefined ? { startTime: secUsec(plan.txStartS) } : {}),
  };
}

function socketOptions(plan: ClientPlan): SocketOptions {
  return {
    sendBuffer: plan.window,
    noDelay: plan.noDelay || undefined,
    mss: plan.mss,
    congestion: plan.congestion,
    tos: plan.tos || undefined,
  };
}

function specRate(plan: ClientPlan): { bitsPerSecond?: number; packetsPerSecond?: number } {
  const r = plan.rate;
  if (!r) return {};
  return r.units === "pps" ? { packetsPerSecond: r.value } : { bitsPerSecond: r.value };
}

const secUsec = (s: number) => ({ sec: Math.floor(s), usec: Math.floor((s % 1) * 1e6) % 1_000_000 });

const limitBytes = (plan: ClientPlan): number => (plan.amount.kind === "bytes" ? plan.amount.bytes : 0);

/** `anyperf iperf -c host ...`: returns the exit code. */
export async function runClient(plan: ClientPlan, io: ClientIo): Promise<number> {
  if (plan.bounceback) return runBouncebackClient(plan, io);
  if (plan.connectOnly !== undefined) {
    const host = await resolveHost(plan.host, plan.ipv6);
    return runConnectOnly(plan, io, async () => {
      const c = await connectHere(plan, io, host);
      return { ...c, fd: c.s.fd, close: () => c.s.end() };
    });
  }
  const localHost = await localAddressToward(io.net, io.sockopt, plan.host);
  const perStream = !plan.udp && (plan.reverse || plan.fullDuplex);
  // -R/--full-duplex open one plane per connection; the other modes one plane for all -P streams (-d's connect-backs
  // arrive after the window began and are held, not counted).
  const test = iperf2Test(
    {
      role: "client", peer: { host: plan.host, port: plan.port }, transport: plan.udp ? "udp" : "tcp",
      durationS: plan.amount.kind === "time" ? plan.amount.seconds : 0, intervalS: plan.intervalS,
    },
    perStream ? plan.parallel : 1,
  );
  io.onRun?.(test);
  try {
    const g = group(plan, io, "test", plan.parallel, test);
    if (plan.udp) return await (plan.reverse ? udpReverse(plan, io, localHost, g) : udpForward(plan, io, localHost, g));
    if (perStream) return await tcpReverse(plan, io, g);
    return await tcpForward(plan, io, localHost, g);
  } finally {
    test.end();
  }
}

/** `test`: the Test the group's streams are planes of (their intervals and lines read its windows). */
function group(plan: ClientPlan, io: ClientIo, key: string, expected: number, test: TestRun): ReportGroup {
  return new ReportGroup(key, expected, io.printer, { format: plan.format, enhanced: plan.enhanced, csv: plan.csv, intervalS: plan.intervalS, test });
}

/** A -r test: the server's connect-back, a test of its own. */
function tradeoffGroup(plan: ClientPlan, io: ClientIo, key: string): ReportGroup {
  const durationS = plan.amount.kind === "time" ? plan.amount.seconds : 0;
  return group(plan, io, key, 1, iperf2Test({ role: "client", peer: { host: plan.host, port: plan.port }, transport: "tcp", durationS, intervalS: plan.intervalS }, 1));
}

/**
 * What every topology runs the same way: its streams (`ended` when all have), what stops our sending, what stops
 * everything, and whether the peer's sending ends the test (-R, --full-duplex, UDP -R).
 */
interface Streams {
  ended: Promise<unknown>;
  /** Time is up: stop what we send; resolves when our streams have ended. */
  stopSending(): Promise<unknown>;
  stop(): Promise<unknown>;
  peerEnds: boolean;
}

/**
 * The one timing path. A timed test stops our sending when its time is up (the group's intervals end there) and
 * waits for the streams' end: our FIN exchange (bounded by 15 s, 1 s once a signal ended the test) or the peer's own
 * end (bounded by a grace period after its requested time). Byte-limited tests end by themselves. A signal ends the
 * wait, during the test or its stop: the user asked to stop.
 */
async function runTest(plan: ClientPlan, io: ClientIo, g: ReportGroup, s: Streams): Promise<void> {
  if (plan.amount.kind === "bytes") {
    io.signal.addEventListener("abort", () => void s.stop(), { once: true });
    await within(s.ended, MAX_TIMER_MS, io.signal);
    await s.stop();
    return;
  }
  const ms = plan.amount.seconds * 1000;
  const startMs = performance.now();
  await within(s.ended, ms, io.signal);
  if (!s.peerEnds) {
    g.stopped(performance.now());
    await within(s.stopSending(), io.signal.aborted ? STOP_AFTER_SIGNAL_MS : STOP_BOUND_MS, io.signal);
    return;
  }
  void s.stopSending();
  // A signal ends a test the peer sends at once, as stock's client closes its sockets: the server's writes fail.
  if (io.signal.aborted) g.stopped(performance.now());
  else await within(s.ended, startMs + ms + REVERSE_GRACE_MS - performance.now(), io.signal);
  await s.stop();
}

/** One test connection made on the main thread and handed to a Worker, or (without socket fds) left to the Worker. */
interface ClientConn {
  local: Endpoint;
  init?: TcpInit;
  handed?: Handed;
  sock?: number;
  connectMs?: number;
  at?: Date;
}

function bindOf(plan: ClientPlan): Endpoint | undefined {
  return plan.bind ? { host: plan.bind.host, port: plan.bind.port ?? 0 } : undefined;
}

/** Connects one connection here (options before connect): the socket, how long connect() took, the handshake's figures. */
async function connectHere(plan: ClientPlan, io: ClientIo, host: string) {
  const start = performance.now();
  // Ctrl+C must not wait for a connect a full backlog holds (SYNs dropped for up to 2 min).
  const s = await unlessAborted(connectMain(io, { host, port: plan.port }, socketOptions(plan), bindOf(plan)), io.signal, (late) => late.terminate()).catch((e: unknown) => {
    throw e instanceof Interrupted ? new UserError(`interrupted while connecting to ${host} port ${plan.port}`, 1) : e;
  });
  const connectMs = performance.now() - start;
  const init = initialTcp(io.sockopt, s);
  const local = { host: (s.fd !== undefined ? io.sockopt?.localAddress(s.fd)?.host : undefined) ?? s.localAddress?.replace(/^::ffff:/, "") ?? host, port: s.localPort ?? 0 };
  return { s, connectMs, init, local };
}

/** Connects one test connection here, writes `header` if given, and hands it over. */
async function connectTest(plan: ClientPlan, io: ClientIo, host: string, header?: Uint8Array): Promise<ClientConn> {
  const { s, connectMs, init, local } = await connectHere(plan, io, host);
  // A fresh socket's buffer takes a header of 60-odd bytes whole.
  if (header && header.length > 0) s.write(header, 0, header.length);
  const handed = handToWorker(io.handOff, s as TcpSocket<unknown>, plan.enhanced);
  // "(sock=N)" names the descriptor the Worker keeps; the one Bun had is closed and reused at once.
  return { local, init, sock: handed.fd, connectMs, at: new Date(), handed };
}

function tcpLine(plan: ClientPlan, id: number, c: ClientConn, server: Endpoint): string {
  const direction = plan.fullDuplex ? "full-duplex" : plan.reverse ? "reverse" : undefined;
  const notes = connectionNotes({ isochronous: plan.isochronous !== undefined, direction, epochStart: plan.txStartS !== undefined, tripTimes: plan.tripTimes, enhanced: plan.enhanced, sock: c.sock, quickAck: plan.tcpQuickAck, init: c.init, connectMs: c.connectMs, at: c.at });
  return connectionLine(id, withInterface(c.local, plan.enhanced), server, notes);
}

function tcpBanner(plan: ClientPlan, io: ClientIo): void {
  io.printer.info(
    ...clientBanner({
      host: plan.host, port: plan.port, udp: false, buffer: plan.window === undefined ? defaultBuffers.tcpSend() : setBuffers.send(plan.window), requested: plan.window, enhanced: plan.enhanced,
      pid: process.pid, writeLen: plan.len, flows: plan.parallel, tos: plan.tos, noDelay: plan.noDelay, writeTimer: plan.writeTimes, isochronous: plan.isochronous,
      extra: plan.histograms ? [histogramsBanner(plan.histograms)] : [],
    }),
  );
}

function udpBanner(plan: ClientPlan, io: ClientIo, extra: { enhanced?: boolean; pid?: number; flows?: number }): void {
  const rate = plan.rate;
  io.printer.info(
    ...clientBanner({
      host: plan.host, port: plan.port, udp: true, buffer: plan.window === undefined ? defaultBuffers.udp() : setBuffers.send(plan.window), requested: plan.window, datagramSize: plan.len,
      rateBps: rate?.units === "bps" ? rate.value : null, pps: rate?.units === "pps" ? rate.value : null, isochronous: plan.isochronous, ...extra,
    }),
  );
}

/**
 * Our streams send on one plane, and each one's report ends when we stopped sending (the FIN exchange is not in it).
 * `endRest`: streams interrupted while they still waited for the server's end get their reports now.
 */
function sending(plane: DataPlane, g: ReportGroup, members: Member[], printer: Printer, release: (stream: number) => void = () => {}): Streams & { endRest(): void } {
  let stopMs: number | undefined;
  plane.onStreamEnd((stream, end) => {
    // A server gone mid-test (reset, killed): stock's writer says so on stderr, then the test ends with its figures.
    if (stopMs === undefined && end.reason === "eof" && end.error?.code) printer.warning(`write failed: ${strerror(end.error.code)}`);
    g.ended(members[stream]!, stopMs);
    release(stream);
  });
  return {
    endRest: () => {
      for (const m of members) g.ended(m, stopMs);
    },
    ended: plane.ended,
    stopSending: () => {
      stopMs = performance.now();
      for (const m of members) m.tcp?.settle();
      return plane.stop();
    },
    stop: () => plane.stop(),
    peerEnds: false,
  };
}

async function tcpForward(plan: ClientPlan, io: ClientIo, localHost: string, forward: ReportGroup): Promise<number> {
  const asked = request(plan);
  const header = buildClientHeader(asked);
  const headerBytes = header ? encodeClientHeader(header, "tcp") : undefined;
  // --trip-times: every write is a burst that opens with its stamped header (docs/protocols/iperf2.md §2.7).
  const bursts = headerBytes && asked.tripStart ? tcpBurstTemplate(headerBytes, digitsPayload(plan.len), asked.tripStart, periodUs(plan)) : undefined;
  const connectBack = (joined: ReportGroup | null) => {
    const l = new ConnectBackListener(plan, io, joined, (key) => tradeoffGroup(plan, io, key), plan.parallel + 1);
    return l.start() ? l : undefined;
  };
  const listener = plan.dual ? connectBack(forward) : undefined;
  tcpBanner(plan, io);
  const tradeoff = plan.tradeoff ? connectBack(null) : undefined;
  const { sockopt } = io;
  const host = await resolveHost(plan.host, plan.ipv6);
  const conns: ClientConn[] = [];
  // --txstart-time: the header goes out at connect, as stock's, so a server learns the start time before it comes.
  const early = plan.txStartS !== undefined && sockopt !== undefined;
  try {
    // All connections first, as iperf does (its -P threads wait for each other before sending).
    for (let i = 0; i < plan.parallel; i++) conns.push(sockopt ? await connectTest(plan, io, host, early ? headerBytes : undefined) : { local: { host: localHost, port: 0 } });
  } catch (e) {
    for (const c of conns) c.handed?.release();
    throw e;
  }
  const specs: StreamSpecInput[] = conns.map((c, i) => ({
    kind: "tcp-send" as const,
    id: i,
    ...(c.handed
      ? { adopt: { ...c.handed.adopt, pending: 0 } }
      : { connect: { host, port: plan.port }, bind: bindOf(plan), options: socketOptions(plan) }),
    preamble: early ? undefined : headerBytes,
    payload: bursts ?? digitsPayload(plan.len),
    ...(bursts ? { stampWrites: plan.isochronous ? { ...TCP_BURST_STAMPS, sizeAt: TCP_BURST_HEADER.sizeAt } : TCP_BURST_STAMPS } : {}),
    frames: tcpFramesOf(plan),
    writeSize: plan.len,
    rate: specRate(plan),
    limitBytes: limitBytes(plan),
    end: "fin-wait-eof" as const,
    timeCalls: plan.writeTimes,
  }));
  const plane = await DataPlane.open(specs);
  forward.attach(plane, "send");
  const server = { host: plan.host, port: plan.port };
  const startMs = 0;
  const members: Member[] = conns.map((c, i) => {
    if (!c.handed) c.local = { host: localHost, port: plane.localPorts[i] ?? 0 };
    io.printer.info(tcpLine(plan, i + 1, c, server));
    // The header counts as sent data, as it does for the stock client and server.
    return {
      id: String(i + 1), numericId: i + 1, stream: { plane, index: i }, transport: "tcp", role: "send", headerBytes: headerBytes?.length,
      startMs, client: c.local, server, tcp: c.handed?.tcp, writeTimes: plan.writeTimes ? { histograms: plan.histograms } : undefined,
      isochronous: plan.isochronous !== undefined,
    };
  });
  if (plan.txStartS !== undefined) await startAt(plan.txStartS, members, io);
  for (const m of members) {
    m.startMs = performance.now();
    forward.add(m, true);
  }
  const streams = sending(plane, forward, members, io.printer, (i) => conns[i]!.handed?.release());
  plane.go();
  await runTest(plan, io, forward, streams);
  streams.endRest();
  await (listener ?? tradeoff)?.finish(io.signal);
  return 0;
}

/** --txstart-time: each stream says when it starts, as stock's does, then the first write waits for that epoch time. */
async function startAt(startS: number, members: Member[], io: ClientIo): Promise<void> {
  const now = new Date();
  const n = secondsUntilStart(startS, now.getTime() / 1000);
  const at = wallClockText(new Date((Math.floor(now.getTime() / 1000) + n) * 1000)).replace(/ \(.*\)$/, "");
  // Stock prints nothing for a start time already past.
  if (n > 0) for (const m of members) io.printer.info(`[${String(m.numericId).padStart(3)}] Client traffic to start in ${n} seconds at ${at} current time is ${wallClockText(now)}`);
  await sleep(startS * 1000 - Date.now(), io.signal);
}

/**
 * -R and --full-duplex: we connect and send the header here, then the socket goes to a Worker. --full-duplex is one
 * stream that sends and counts what it reads on the same socket.
 */
async function tcpReverse(plan: ClientPlan, io: ClientIo, g: ReportGroup): Promise<number> {
  const header = buildClientHeader(request(plan));
  const headerBytes = header ? encodeClientHeader(header, "tcp") : new Uint8Array(0);
  tcpBanner(plan, io);
  const server = { host: plan.host, port: plan.port };
  const host = await resolveHost(plan.host, plan.ipv6);
  const planes: DataPlane[] = [];
  const senders: Member[] = [];
  let sendStoppedMs: number | undefined;
  for (let i = 0; i < plan.parallel; i++) {
    const c = await connectTest(plan, io, host, headerBytes);
    const handed = c.handed!;
    const id = i + 1;
    io.printer.info(tcpLine(plan, id, c, server));
    const startMs = performance.now();
    // As a stock client's receiving thread: TCP_QUICKACK before each read.
    const options = plan.tcpQuickAck ? { quickAck: true } : {};
    const spec: StreamSpecInput = plan.fullDuplex
      ? {
          kind: "tcp-send", id: 0, adopt: { ...handed.adopt, pending: 0 }, payload: digitsPayload(plan.len), writeSize: plan.len, rate: specRate(plan),
          limitBytes: limitBytes(plan), end: "fin-wait-eof", countReceived: true, idleTimeoutMs: 60_000, options,
        }
      : { kind: "tcp-recv", id: 0, adopt: { ...handed.adopt, pending: 0 }, endOnEof: true, idleTimeoutMs: 60_000, options };
    const plane = await openOnHanded(handed, spec);
    g.attach(plane, plan.fullDuplex ? "send" : "recv", startMs);
    const stream = { plane, index: 0 };
    const recv: Member = {
      id: `*${id}`, numericId: id, stream, transport: "tcp", role: "recv", counted: plan.fullDuplex ? "received" : "bytes", startMs, client: c.local, server,
    };
    const sender: Member | undefined = plan.fullDuplex
      ? { id: String(id), numericId: id, stream, transport: "tcp", role: "send", headerBytes: headerBytes.length, startMs, client: c.local, server, tcp: handed.tcp }
      : undefined;
    if (sender) {
      g.add(sender, true);
      senders.push(sender);
    }
    g.add(recv, !sender);
    plane.onStreamEnd(() => {
      if (sender) g.ended(sender, sendStoppedMs);
      g.ended(recv);
      handed.release();
    });
    plane.go();
    planes.push(plane);
  }
  await runTest(plan, io, g, {
    ended: Promise.all(planes.map((p) => p.ended)),
    stopSending: async () => {
      if (!plan.fullDuplex) return;
      // Our half ends now; each stream goes on reading until the server's FIN.
      sendStoppedMs = performance.now();
      for (const m of senders) m.tcp?.settle();
      for (const p of planes) p.stopStream(0);
    },
    stop: () => Promise.all(planes.map((p) => p.stop())),
    peerEnds: true,
  });
  return 0;
}

/** The frame period an --isochronous client's bursts carry, whole µs as stock keeps it; 0 otherwise. */
const periodUs = (plan: ClientPlan) => (plan.isochronous ? Math.floor(1e6 / plan.isochronous.perSecond) : 0);

/** TCP --isochronous: each frame a burst at its slot, opening with the 92-byte burst header (docs/protocols/iperf2.md §2.7). */
function tcpFramesOf(plan: ClientPlan): TcpSendSpecInput["frames"] {
  const f = plan.isochronous;
  if (!f) return undefined;
  const seconds = plan.amount.kind === "time" ? plan.amount.seconds : undefined;
  return { perSecond: f.perSecond, meanBps: f.meanBps, stddevBps: f.stddevBps, minBytes: TCP_BURST_HEADER.headerBytes, seconds };
}

/**
 * --isochronous: the Worker sends frames, their fields in the last 32 bytes of our header (datagram offset 76, as
 * 2.1.8's), no datagram shorter than the header (docs/protocols/iperf2.md §3.6).
 */
function framesOf(plan: ClientPlan, s: UdpClientSession): UdpSendSpecInput["frames"] {
  const f = plan.isochronous;
  if (!f) return undefined;
  const seconds = plan.amount.kind === "time" ? plan.amount.seconds : undefined;
  return { perSecond: f.perSecond, meanBps: f.meanBps, stddevBps: f.stddevBps, gapUs: f.ipgMs * 1000, fieldsAt: s.headerEnd - ISOCH_PAYLOAD, minBytes: s.headerEnd, seconds };
}

interface UdpStreamResult {
  id: number;
  local: Endpoint;
  report: ServerReport | null | undefined;
}

async function udpForward(plan: ClientPlan, io: ClientIo, localHost: string, g: ReportGroup): Promise<number> {
  const sessions = Array.from({ length: plan.parallel }, () => new UdpClientSession(request(plan), plan.len));
  udpBanner(plan, io, { enhanced: plan.enhanced, pid: process.pid, flows: plan.parallel });
  const specs: StreamSpecInput[] = sessions.map((s, i) => ({
    kind: "udp-send" as const,
    id: i,
    connect: { host: plan.host, port: plan.port },
    bind: bindOf(plan),
    options: { sendBuffer: plan.window, tos: plan.tos || undefined },
    datagramSize: plan.len,
    format: "iperf2" as const,
    payload: s.template,
    fill: 0,
    rate: specRate(plan),
    frames: framesOf(plan, s),
    limitBytes: limitBytes(plan),
    trimLast: true,
    // --no-udp-fin still ends the flow with one FIN (stock's client does; a stock server's flow stays open without
    // it), only no report is awaited.
    endMarker: plan.noUdpFin ? ("iperf2-fin-once" as const) : ("iperf2-fin" as const),
    batch: UDP_BATCH,
  }));
  const plane = await DataPlane.open(specs);
  g.attach(plane, "send");
  const server = { host: plan.host, port: plan.port };
  const results: UdpStreamResult[] = sessions.map((_, i) => ({ id: i + 1, local: { host: localHost, port: plane.localPorts[i] ?? 0 }, report: undefined }));
  const at = new Date();
  results.forEach((r, i) => {
    const notes = connectionNotes({ isochronous: plan.isochronous !== undefined, enhanced: plan.enhanced, tripTimes: plan.tripTimes, noUdpFin: plan.noUdpFin, sock: plane.fds[i], at });
    io.printer.info(connectionLine(r.id, withInterface(r.local, plan.enhanced), server, notes));
  });
  plane.onEvent((e) => {
    const r = results[e.stream];
    if (!r || e.name !== "datagram" || !e.bytes || r.report !== undefined) return;
    // Any datagram after our FIN is the report (stock client behaviour); too short to decode = no figures.
    r.report = e.bytes.length >= REPORT_MIN_LENGTH ? decodeServerReport(e.bytes) : null;
    if (r.report) io.onServerReport?.(e.stream, r.report);
  });
  const startMs = performance.now();
  // The stock client's total counts its FIN datagram too (92 data datagrams: "134 KBytes" = 93 x 1470), as the
  // server does; its write count does not.
  const fin = { bytes: plan.len };
  const members: Member[] = results.map((r, i) => ({
    id: String(r.id), numericId: r.id, stream: { plane, index: i }, transport: "udp", role: "send", fin, startMs, client: r.local, server,
    isochronous: plan.isochronous !== undefined,
  }));
  for (const m of members) g.add(m, true);
  const streams = sending(plane, g, members, io.printer);
  plane.go();
  await runTest(plan, io, g, streams);
  streams.endRest();
  if (plan.noUdpFin) return 0;
  for (const r of results) {
    if (r.report === undefined) {
      // Stock names the stream by its socket descriptor there: 3 for the first of a fresh process, 4 for the next.
      io.printer.warning(`${connectionLine(r.id + 2, r.local, server).slice(0, 5)} WARNING: did not receive ack of last datagram after 10 tries.`);
      continue;
    }
    io.printer.report(null, serverReportLine(r.id));
    const line = reportedLine(r.id, r.report, plan.format);
    io.printer.report(line.heading, line.text);
  }
  return 0;
}

/** UDP -R: from each of -P receiving sockets one datagram with the request, then the server's stream until its FIN. */
async function udpReverse(plan: ClientPlan, io: ClientIo, localHost: string, g: ReportGroup): Promise<number> {
  const session = new UdpClientSession(request(plan), plan.len);
  udpBanner(plan, io, { enhanced: plan.enhanced, pid: process.pid, flows: plan.parallel });
  const host = plan.bind?.host ?? (plan.ipv6 ? "::" : "0.0.0.0");
  // A -B port is the first stream's: the others cannot bind it too. With -e each datagram's latency is timed, as
  // the stock client's -e lines carry it.
  const specs: StreamSpecInput[] = Array.from({ length: plan.parallel }, (_, i) => ({
    kind: "udp-recv" as const, id: i, listen: { host, port: i === 0 ? (plan.bind?.port ?? 0) : 0 }, datagramSize: 65535, format: "iperf2" as const, endOn: "fin" as const,
    timeTransit: plan.enhanced,
  }));
  const plane = await DataPlane.open(specs);
  g.attach(plane, "recv");
  const server = { host: plan.host, port: plan.port };
  const at = new Date();
  // Each stream's window opens at its first datagram.
  const members: Member[] = specs.map((_, i) => {
    const local = { host: localHost, port: plane.localPorts[i] ?? 0 };
    const notes = connectionNotes({ direction: "reverse", enhanced: plan.enhanced, sock: plane.fds[i], at });
    io.printer.info(connectionLine(i + 1, withInterface(local, plan.enhanced), server, notes));
    return { id: `*${i + 1}`, numericId: i + 1, stream: { plane, index: i }, transport: "udp", role: "recv", startMs: 0, client: local, server, timed: plan.enhanced };
  });
  const started = (m: Member) => {
    if (m.startMs !== 0) return;
    m.startMs = performance.now();
    g.add(m, true);
  };
  let fins = 0;
  let finished!: () => void;
  const allFins = new Promise<void>((r) => (finished = r));
  plane.onEvent((e) => {
    const m = members[e.stream];
    if (!m) return;
    if (e.name === "connected") started(m);
    if (e.name === "fin" && m.endMs === undefined) {
      started(m);
      g.ended(m);
      if (++fins === members.length) finished();
    }
  });
  plane.go();
  // A stock server takes one request at a time on its port (it connects a socket to each peer in turn): a stream
  // whose server stream has not begun asks again, as stock's client does.
  const ask = () => members.forEach((m, i) => m.startMs === 0 && plane.send(i, session.datagram(1, wallSeconds()), server));
  ask();
  const again = setInterval(() => (members.every((m) => m.startMs !== 0) ? clearInterval(again) : ask()), REQUEST_AGAIN_MS);
  try {
    await runTest(plan, io, g, { ended: allFins, stopSending: async () => {}, stop: () => plane.stop(), peerEnds: true });
  } finally {
    clearInterval(again);
  }
  for (const m of members) {
    started(m);
    g.ended(m);
  }
  return 0;
}
