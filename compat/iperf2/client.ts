import { DataPlane } from "../../src/engine/data-plane.ts";
import { UserError } from "../../src/errors.ts";
import { Interrupted, unlessAborted } from "../../src/signals.ts";
import { packetsPerSecond } from "../../src/formulas.ts";
import type { TcpListener, TcpSocket } from "../../src/net/types.ts";
import type { Sockopt } from "../../src/sockopt/sockopt.ts";
import type { SocketOptions, StreamSpecInput } from "../../src/stream-spec.ts";
import { encodeClientHeader } from "../../interop/iperf2/client-header.ts";
import { type ClientRequestInput, buildClientHeader } from "../../interop/iperf2/client-request.ts";
import { digitsPayload } from "../../interop/iperf2/datagram.ts";
import { REPORT_MIN_LENGTH, type ServerReport, decodeServerReport } from "../../interop/iperf2/server-report.ts";
import { UdpClientSession } from "../../interop/iperf2/udp-client-session.ts";
import { csvUdpLine, finalCsvTime } from "./csv-report.ts";
import { type Member, ReportGroup } from "./groups.ts";
import { LiveTest } from "./live-test.ts";
import { localAddressToward } from "./local-address.ts";
import { type ClientPlan, clientLen, clientRate } from "./plan.ts";
import { defaultBuffers, setBuffers } from "../../src/host/socket-defaults.ts";
import { connectionNotes, withInterface } from "./connection-notes.ts";
import { type Handed, connectMain, handToWorker, initialTcp, openOnHanded, resolveHost } from "./tcp-connect.ts";
import type { ServerIo } from "./tcp-server.ts";
import type { TcpInit } from "./tcp-stats.ts";
import {
  type Endpoint,
  HEADER_BW,
  HEADER_UDP,
  HEADER_UDP_WRITE_ENHANCED,
  bwLine,
  clientBanner,
  connectionLine,
  sentLine,
  serverBanner,
  reportedLine,
  serverReportLine,
  udpLine,
  udpWriteEnhancedLine,
} from "./text-report.ts";
import { wallSeconds } from "./udp-reverse-sender.ts";

/** After our forward test, how long to wait for a -r/-d connect-back that has not arrived yet. */
const CONNECT_BACK_WAIT_MS = 5_000;
/** -R / UDP -R: the server ends the test; give up this long after the requested duration. */
const REVERSE_GRACE_MS = 10_000;
/** Datagrams per send call: small bursts, because a stock server at its default 208 KB buffer drops long ones. */
const UDP_BATCH = 8;

export type ClientIo = ServerIo;

/** How long a stop may wait for the server's FIN once a signal ended the test, and at most otherwise. */
const STOP_AFTER_SIGNAL_MS = 1_000;
const STOP_BOUND_MS = 15_000;

const sleep = (ms: number, signal: AbortSignal) => within(new Promise<void>(() => {}), ms, signal);

/** Waits for `p`, at most `ms` or until aborted; the timer is cleared either way so it never holds the process. */
function within(p: Promise<unknown>, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(t);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
    void p.then(done, done);
  });
}

function request(plan: ClientPlan): ClientRequestInput {
  const rate = clientRate(plan);
  return {
    transport: plan.udp ? "udp" : "tcp",
    direction: plan.fullDuplex ? "full-duplex" : plan.reverse ? "reverse" : "forward",
    connectBack: plan.dual ? "dual" : plan.tradeoff ? "tradeoff" : "none",
    amount: plan.amount,
    rate: rate?.value ?? 0,
    rateUnits: rate?.units ?? "bps",
    bufLen: plan.len ?? 0,
    numThreads: plan.parallel,
    listenPort: plan.listenPort ?? plan.port,
    tos: plan.tos,
    peerDetect: plan.peerDetect,
    noUdpFin: plan.noUdpFin,
    extended: !plan.compat,
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
  const r = clientRate(plan);
  if (!r) return {};
  return r.units === "pps" ? { packetsPerSecond: r.value } : { bitsPerSecond: r.value };
}

/** `anyperf iperf -c host ...`: returns the exit code. */
export async function runClient(plan: ClientPlan, io: ClientIo): Promise<number> {
  const localHost = await localAddressToward(io.net, io.sockopt, plan.host);
  const perStream = !plan.udp && (plan.reverse || plan.fullDuplex);
  // -R/--full-duplex open one plane per connection; the other modes one plane for all -P streams (-d's connect-backs
  // arrive after the window began and are not in it).
  const live = new LiveTest(
    {
      role: "client", peer: { host: plan.host, port: plan.port }, transport: plan.udp ? "udp" : "tcp",
      durationS: plan.amount.kind === "time" ? plan.amount.seconds : 0, intervalS: plan.intervalS,
    },
    perStream ? plan.parallel : 1,
  );
  try {
    if (plan.udp) return await (plan.reverse ? udpReverse(plan, io, localHost, live) : udpForward(plan, io, localHost, live));
    if (perStream) return await tcpReverse(plan, io, live);
    return await tcpForward(plan, io, localHost, live);
  } finally {
    live.end();
  }
}

/** `live`: the client's Test, when the group's streams are its planes (their intervals and lines read its cuts). */
function group(plan: ClientPlan, io: ClientIo, key: string, expected: number, live?: LiveTest): ReportGroup {
  return new ReportGroup(key, expected, io.printer, { format: plan.format, enhanced: plan.enhanced, csv: plan.csv, intervalS: plan.intervalS, live });
}

/** The -r/-d listener: each connection the server opens back is adopted by a Worker and reported as its own stream. */
class ConnectBackListener {
  private listener: TcpListener | undefined;
  private readonly planes: Promise<void>[] = [];
  private arrived = 0;
  private nextId: number;

  constructor(
    private readonly plan: ClientPlan,
    private readonly io: ClientIo,
    private readonly joined: ReportGroup | null,
    firstId: number,
  ) {
    this.nextId = firstId;
  }

  start(): boolean {
    const { plan, io } = this;
    const port = plan.listenPort ?? plan.port;
    io.printer.info(...serverBanner({ port, udp: false, buffer: defaultBuffers.tcpRecv() }));
    try {
      this.listener = io.net.listen<{ handed: boolean }>({
        hostname: plan.bind?.host ?? (plan.ipv6 ? "::" : "0.0.0.0"),
        port,
        data: { handed: false },
        socket: { open: (s) => this.adopt(s), data: () => {}, error: () => {} },
      });
      return true;
    } catch {
      // What the stock client prints when -L collides (same host, default -L = -p): the test goes on one way.
      io.printer.info("listener bind failed: Address already in use");
      return false;
    }
  }

  private adopt(s: TcpSocket<{ handed: boolean }>): void {
    const { io, plan } = this;
    if (this.arrived >= plan.parallel) {
      s.terminate();
      return;
    }
    this.arrived++;
    const id = this.nextId++;
    const local = { host: plan.bind?.host ?? "0.0.0.0", port: s.localPort ?? 0 };
    const peer = { host: s.remoteAddress ?? "?", port: s.remotePort ?? 0 };
    const addr = (s.fd !== undefined ? io.sockopt?.localAddress(s.fd)?.host : undefined) ?? s.localAddress?.replace(/^::ffff:/, "");
    if (addr) local.host = addr;
    io.printer.info(connectionLine(id, local, peer));
    s.data = { handed: true };
    const adopt = io.handOff.tcp(s as TcpSocket<unknown>);
    const startMs = performance.now();
    this.planes.push(
      (async () => {
        const plane = await DataPlane.open([{ kind: "tcp-recv", id: 0, adopt: { ...adopt, pending: 0 }, endOnEof: true, idleTimeoutMs: 60_000 }]);
        const g = this.joined ?? group(plan, io, `back${id}`, 1);
        const m: Member = {
          id: String(id), numericId: id, stream: { plane, index: 0 }, bytes: (c) => c.bytes, calls: (c) => c.packets,
          startMs, client: local, server: peer, role: "recv",
        };
        g.add(m, this.joined === null);
        plane.onStreamEnd(() => g.ended(m));
        plane.go();
        await plane.ended;
      })(),
    );
  }

  /** Waits for the connect-backs: up to CONNECT_BACK_WAIT_MS for them to arrive, then until they end. */
  async finish(signal: AbortSignal): Promise<void> {
    const deadline = performance.now() + CONNECT_BACK_WAIT_MS;
    while (this.arrived < this.plan.parallel && performance.now() < deadline && !signal.aborted) await sleep(20, signal);
    await Promise.all(this.planes);
    this.listener?.stop(true);
  }
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

/** Connects one test connection here (options before connect), writes `header` if given, and hands it over. */
async function connectTest(plan: ClientPlan, io: ClientIo, host: string, header?: Uint8Array): Promise<ClientConn> {
  const start = performance.now();
  // Ctrl+C must not wait for a connect a full backlog holds (SYNs dropped for up to 2 min).
  const s = await unlessAborted(connectMain(io, { host, port: plan.port }, socketOptions(plan), bindOf(plan)), io.signal, (late) => late.terminate()).catch((e: unknown) => {
    throw e instanceof Interrupted ? new UserError(`interrupted while connecting to ${host} port ${plan.port}`, 1) : e;
  });
  const connectMs = performance.now() - start;
  const init = initialTcp(io.sockopt, s);
  const local = { host: (s.fd !== undefined ? io.sockopt?.localAddress(s.fd)?.host : undefined) ?? s.localAddress?.replace(/^::ffff:/, "") ?? host, port: s.localPort ?? 0 };
  // A fresh socket's buffer takes a header of 60-odd bytes whole.
  if (header && header.length > 0) s.write(header, 0, header.length);
  const handed = handToWorker(io.handOff, s as TcpSocket<unknown>, plan.enhanced);
  // "(sock=N)" names the descriptor the Worker keeps; the one Bun had is closed and reused at once.
  return { local, init, sock: handed.fd, connectMs, at: new Date(), handed };
}

function tcpLine(plan: ClientPlan, id: number, c: ClientConn, server: Endpoint): string {
  const direction = plan.fullDuplex ? "full-duplex" : plan.reverse ? "reverse" : undefined;
  const notes = connectionNotes({ direction, enhanced: plan.enhanced, sock: c.sock, init: c.init, connectMs: c.connectMs, at: c.at });
  return connectionLine(id, withInterface(c.local, plan.enhanced), server, notes);
}

function tcpBanner(plan: ClientPlan, io: ClientIo, len: number): void {
  io.printer.info(
    ...clientBanner({
      host: plan.host, port: plan.port, udp: false, buffer: plan.window === undefined ? defaultBuffers.tcpSend() : setBuffers.send(plan.window), requested: plan.window, enhanced: plan.enhanced,
      pid: process.pid, writeLen: len, flows: plan.parallel, tos: plan.tos, noDelay: plan.noDelay,
    }),
  );
}

async function tcpForward(plan: ClientPlan, io: ClientIo, localHost: string, live: LiveTest): Promise<number> {
  const len = clientLen(plan);
  const header = buildClientHeader(request(plan));
  const headerBytes = header ? encodeClientHeader(header, "tcp") : undefined;
  let listener: ConnectBackListener | undefined;
  const forward = group(plan, io, "forward", plan.parallel, live);
  if (plan.dual) {
    listener = new ConnectBackListener(plan, io, forward, plan.parallel + 1);
    if (!listener.start()) listener = undefined;
  }
  tcpBanner(plan, io, len);
  if (plan.tradeoff) {
    listener = new ConnectBackListener(plan, io, null, plan.parallel + 1);
    if (!listener.start()) listener = undefined;
  }
  const { sockopt } = io;
  const host = await resolveHost(plan.host, plan.ipv6);
  const conns: ClientConn[] = [];
  try {
    // All connections first, as iperf does (its -P threads wait for each other before sending).
    for (let i = 0; i < plan.parallel; i++) conns.push(sockopt ? await connectTest(plan, io, host) : { local: { host: localHost, port: 0 } });
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
    preamble: headerBytes,
    payload: digitsPayload(len),
    writeSize: len,
    rate: specRate(plan),
    limitBytes: plan.amount.kind === "bytes" ? plan.amount.bytes : 0,
    end: "fin-wait-eof" as const,
  }));
  const plane = await DataPlane.open(specs);
  live.attach(plane, "send");
  const server = { host: plan.host, port: plan.port };
  const members: Member[] = conns.map((c, i) => {
    if (!c.handed) c.local = { host: localHost, port: plane.localPorts[i] ?? 0 };
    const local = c.local;
    io.printer.info(tcpLine(plan, i + 1, c, server));
    // The header counts as sent data, as it does for the stock client and server.
    const extra = headerBytes?.length ?? 0;
    return {
      id: String(i + 1), numericId: i + 1, stream: { plane, index: i }, bytes: (c) => c.bytes + extra, calls: (c) => c.packets,
      startMs: 0, client: local, server, role: "send", tcp: c.handed?.tcp,
    };
  });
  const startMs = performance.now();
  for (const m of members) {
    m.startMs = startMs;
    forward.add(m, true);
  }
  // A timed stream's report ends when we stopped sending, not after the FIN exchange that follows it: a server
  // that never reads nor closes holds that exchange for its 10 s bound.
  let stopMs: number | undefined;
  plane.onStreamEnd((stream) => {
    forward.ended(members[stream]!, stopMs);
    conns[stream]!.handed?.release();
  });
  plane.go();
  await runFor(plan, plane, io.signal, () => {
    stopMs = performance.now();
    for (const c of conns) c.handed?.tcp?.settle();
  });
  // Interrupted while the streams still waited for the server's FIN: their reports go out now.
  for (const m of members) forward.ended(m, stopMs);
  if (listener) await listener.finish(io.signal);
  return 0;
}

/**
 * Time-limited tests end when we stop them; byte-limited ones end by themselves. A signal during the stop (FIN
 * sent, a silent server's EOF awaited for up to 10 s) ends the wait: the user asked to stop.
 */
async function runFor(plan: ClientPlan, plane: DataPlane, signal: AbortSignal, stopping: () => void = () => {}): Promise<void> {
  if (plan.amount.kind === "time") {
    await within(plane.ended, plan.amount.seconds * 1000, signal);
    stopping();
    // The Workers' own bound on the FIN exchange is 10 s; a signal that already ended the test gives it 1 s.
    await within(plane.stop(), signal.aborted ? STOP_AFTER_SIGNAL_MS : STOP_BOUND_MS, signal);
  } else {
    signal.addEventListener("abort", () => void plane.stop(), { once: true });
    await plane.ended;
  }
}

/**
 * -R and --full-duplex: we connect and send the header here, then the socket goes to a Worker. --full-duplex is one
 * stream that sends and counts what it reads on the same socket.
 */
async function tcpReverse(plan: ClientPlan, io: ClientIo, live: LiveTest): Promise<number> {
  const len = clientLen(plan);
  const header = buildClientHeader(request(plan));
  const headerBytes = header ? encodeClientHeader(header, "tcp") : new Uint8Array(0);
  tcpBanner(plan, io, len);
  const server = { host: plan.host, port: plan.port };
  const g = group(plan, io, "reverse", plan.parallel, live);
  const host = await resolveHost(plan.host, plan.ipv6);
  const runs: Promise<void>[] = [];
  for (let i = 0; i < plan.parallel; i++) {
    const c = await connectTest(plan, io, host, headerBytes);
    const handed = c.handed!;
    const id = i + 1;
    io.printer.info(tcpLine(plan, id, c, server));
    const startMs = performance.now();
    const spec: StreamSpecInput = plan.fullDuplex
      ? {
          kind: "tcp-send", id: 0, adopt: { ...handed.adopt, pending: 0 }, payload: digitsPayload(len), writeSize: len, rate: specRate(plan),
          limitBytes: plan.amount.kind === "bytes" ? plan.amount.bytes : 0, end: "fin-wait-eof", countReceived: true, idleTimeoutMs: 60_000,
        }
      : { kind: "tcp-recv", id: 0, adopt: { ...handed.adopt, pending: 0 }, endOnEof: true, idleTimeoutMs: 60_000 };
    const plane = await openOnHanded(handed, spec);
    live.attach(plane, plan.fullDuplex ? "send" : "recv", startMs);
    const recv: Member = {
      id: `*${id}`, numericId: id, stream: { plane, index: 0 }, bytes: (c) => (plan.fullDuplex ? c.received : c.bytes), calls: (c) => c.packets,
      startMs, client: c.local, server, role: "recv",
    };
    const sender: Member | undefined = plan.fullDuplex
      ? {
          id: String(id), numericId: id, stream: { plane, index: 0 }, bytes: (c) => c.bytes + headerBytes.length, calls: (c) => c.packets,
          startMs, client: c.local, server, role: "send", tcp: handed.tcp,
        }
      : undefined;
    if (sender) g.add(sender, true);
    g.add(recv, !sender);
    let sendStoppedMs: number | undefined;
    plane.onStreamEnd(() => {
      if (sender) g.ended(sender, sendStoppedMs);
      g.ended(recv);
      handed.release();
    });
    plane.go();
    runs.push(
      (async () => {
        if (plan.amount.kind === "time") {
          const seconds = plan.amount.seconds;
          if (plan.fullDuplex) {
            await within(plane.ended, seconds * 1000, io.signal);
            // Our half ends now; the stream goes on reading until the server's FIN.
            sendStoppedMs = performance.now();
            handed.tcp?.settle();
            plane.stopStream(0);
          }
          // The server ends the reverse direction; a server that never does is cut off after a grace period.
          await within(plane.ended, seconds * 1000 + REVERSE_GRACE_MS, io.signal);
        } else {
          await Promise.race([plane.ended, new Promise<void>((r) => io.signal.addEventListener("abort", () => r(), { once: true }))]);
        }
        await plane.stop();
      })(),
    );
  }
  await Promise.all(runs);
  return 0;
}

interface UdpStreamResult {
  id: number;
  local: Endpoint;
  report: ServerReport | null | undefined;
}

async function udpForward(plan: ClientPlan, io: ClientIo, localHost: string, live: LiveTest): Promise<number> {
  const len = clientLen(plan);
  const rate = clientRate(plan);
  const sessions = Array.from({ length: plan.parallel }, () => new UdpClientSession(request(plan), len));
  io.printer.info(
    ...clientBanner({
      host: plan.host, port: plan.port, udp: true, buffer: plan.window === undefined ? defaultBuffers.udp() : setBuffers.send(plan.window), requested: plan.window, datagramSize: len,
      rateBps: rate?.units === "bps" ? rate.value : null, pps: rate?.units === "pps" ? rate.value : null, enhanced: plan.enhanced, pid: process.pid, flows: plan.parallel,
    }),
  );
  const specs: StreamSpecInput[] = sessions.map((s, i) => ({
    kind: "udp-send" as const,
    id: i,
    connect: { host: plan.host, port: plan.port },
    bind: plan.bind ? { host: plan.bind.host, port: plan.bind.port ?? 0 } : undefined,
    options: { sendBuffer: plan.window, tos: plan.tos || undefined },
    datagramSize: len,
    format: "iperf2" as const,
    payload: s.template,
    fill: 0,
    rate: specRate(plan),
    limitBytes: plan.amount.kind === "bytes" ? plan.amount.bytes : 0,
    endMarker: plan.noUdpFin ? ("none" as const) : ("iperf2-fin" as const),
    batch: UDP_BATCH,
  }));
  const plane = await DataPlane.open(specs);
  live.attach(plane, "send");
  const results: UdpStreamResult[] = sessions.map((_, i) => ({ id: i + 1, local: { host: localHost, port: plane.localPorts[i] ?? 0 }, report: undefined }));
  const udpNotes = connectionNotes({ enhanced: plan.enhanced, noUdpFin: plan.noUdpFin, at: new Date() });
  for (const r of results) io.printer.info(connectionLine(r.id, withInterface(r.local, plan.enhanced), { host: plan.host, port: plan.port }, udpNotes));
  plane.onEvent((e) => {
    const r = results[e.stream];
    if (!r || e.name !== "datagram" || !e.bytes || r.report !== undefined) return;
    // Any datagram after our FIN is the report (stock client behaviour); too short to decode = no figures.
    r.report = e.bytes.length >= REPORT_MIN_LENGTH ? decodeServerReport(e.bytes) : null;
  });
  const startMs = performance.now();
  let stopMs = 0;
  let ticks = 0;
  const last = results.map(() => ({ bytes: 0, packets: 0, sendErrors: 0 }));
  const intervals = plan.intervalS > 0 ? setInterval(() => udpInterval(), plan.intervalS * 1000) : undefined;
  if (intervals) live.cutsIntervals();
  const udpInterval = () => {
    const snap = LiveTest.of(live.interval(), plane);
    const start = ticks * plan.intervalS;
    ticks++;
    results.forEach((r, i) => {
      const c = snap.streams[i]!;
      const was = last[i]!;
      last[i] = { bytes: c.bytes, packets: c.packets, sendErrors: c.sendErrors };
      const moved = { bytes: c.bytes - was.bytes, packets: c.packets - was.packets, sendErrors: c.sendErrors - was.sendErrors };
      udpSenderLine(plan, io, r, start, start + plan.intervalS, moved, new Date());
    });
  };
  plane.go();
  if (plan.amount.kind === "time") {
    await within(plane.ended, plan.amount.seconds * 1000, io.signal);
    stopMs = performance.now();
    if (intervals) {
      clearInterval(intervals);
      // The timer and the end of the test fall on the same instant; the last interval is printed either way.
      if ((stopMs - startMs) / 1000 >= (ticks + 1) * plan.intervalS - 0.05) udpInterval();
    }
    // The stop resends the FIN for up to 2 s while the server's report does not come: a signal ends that wait.
    await within(plane.stop(), io.signal.aborted ? STOP_AFTER_SIGNAL_MS : STOP_BOUND_MS, io.signal);
  } else {
    io.signal.addEventListener("abort", () => void plane.stop(), { once: true });
    const ends: number[] = [];
    plane.onStreamEnd(() => ends.push(performance.now()));
    await plane.ended;
    stopMs = Math.max(...ends);
    if (intervals) clearInterval(intervals);
  }
  const seconds = (stopMs - startMs) / 1000;
  const snap = LiveTest.of(live.cut(), plane);
  let sumBytes = 0;
  let sumPackets = 0;
  // The stock client's total counts its FIN datagram too (92 data datagrams: "134 KBytes" = 93 x 1470), as the
  // server does; its write count does not.
  const finBytes = plan.noUdpFin ? 0 : len;
  results.forEach((r, i) => {
    const c = snap.streams[i]!;
    sumBytes += c.bytes + finBytes;
    sumPackets += c.packets;
    udpSenderLine(plan, io, r, 0, seconds, { ...c, bytes: c.bytes + finBytes }, finalCsvTime(plan.intervalS));
    // Stock counts the FIN and one more in "Sent": 92 data datagrams print "Sent 94 datagrams".
    io.printer.report(null, sentLine(r.id, c.packets + 2));
  });
  if (results.length > 1) {
    io.printer.report(HEADER_BW, bwLine({ id: "SUM", start: 0, end: seconds, bytes: sumBytes }, plan.format));
    io.printer.report(null, sentLine(`SUM-${results.length}`, sumPackets + 2 * results.length));
  }
  if (plan.noUdpFin) return 0;
  for (const r of results) {
    if (r.report === undefined) {
      // Stock names the stream by its socket descriptor there: 3 for the first of a fresh process, 4 for the next.
      io.printer.warning(`${connectionLine(r.id + 2, r.local, { host: plan.host, port: plan.port }).slice(0, 5)} WARNING: did not receive ack of last datagram after 10 tries.`);
      continue;
    }
    io.printer.report(null, serverReportLine(r.id));
    const line = reportedLine(r.id, r.report, plan.format);
    io.printer.report(line.heading, line.text);
  }
  return 0;
}

function udpSenderLine(
  plan: ClientPlan,
  io: ClientIo,
  r: UdpStreamResult,
  start: number,
  end: number,
  c: { bytes: number; packets: number; sendErrors: number },
  at: Date | null,
): void {
  const { bytes, packets } = c;
  if (plan.csv) {
    io.printer.csvLine(csvUdpLine({ at, client: r.local, server: { host: plan.host, port: plan.port }, id: r.id, start, end, bytes, jitterS: 0, lost: 0, total: packets, outOfOrder: 0, millis: plan.enhanced }));
    return;
  }
  const fig = { id: r.id, start, end, bytes };
  if (plan.enhanced) io.printer.report(HEADER_UDP_WRITE_ENHANCED, udpWriteEnhancedLine(fig, packets, c.sendErrors, packetsPerSecond(packets, end - start), plan.format));
  else io.printer.report(HEADER_BW, bwLine(fig, plan.format));
}

/** UDP -R: one datagram with the request from our receiving socket, then the server's stream until its FIN. */
async function udpReverse(plan: ClientPlan, io: ClientIo, localHost: string, live: LiveTest): Promise<number> {
  const len = clientLen(plan);
  const session = new UdpClientSession(request(plan), len);
  const rate = clientRate(plan);
  io.printer.info(
    ...clientBanner({
      host: plan.host, port: plan.port, udp: true, buffer: plan.window === undefined ? defaultBuffers.udp() : setBuffers.send(plan.window), requested: plan.window, datagramSize: len,
      rateBps: rate?.units === "bps" ? rate.value : null, pps: rate?.units === "pps" ? rate.value : null,
    }),
  );
  const plane = await DataPlane.open([
    { kind: "udp-recv", id: 0, listen: { host: plan.bind?.host ?? (plan.ipv6 ? "::" : "0.0.0.0"), port: plan.bind?.port ?? 0 }, datagramSize: 65535, format: "iperf2", endOn: "fin" },
  ]);
  live.attach(plane, "recv");
  const local = { host: localHost, port: plane.localPorts[0] ?? 0 };
  const server = { host: plan.host, port: plan.port };
  io.printer.info(connectionLine(1, withInterface(local, plan.enhanced), server, connectionNotes({ direction: "reverse", enhanced: plan.enhanced, at: new Date() })));
  let firstMs = 0;
  let finMs = 0;
  let finished!: () => void;
  const fin = new Promise<void>((r) => (finished = r));
  plane.onEvent((e) => {
    if (e.name === "connected" && firstMs === 0) firstMs = performance.now();
    if (e.name === "fin") {
      finMs = performance.now();
      finished();
    }
  });
  plane.go();
  plane.send(0, session.datagram(1, wallSeconds()), server);
  const limit = plan.amount.kind === "time" ? plan.amount.seconds * 1000 + REVERSE_GRACE_MS : 3_600_000;
  await within(fin, limit, io.signal);
  const c = LiveTest.of(live.cut(), plane).streams[0]!;
  await plane.stop();
  const seconds = firstMs > 0 ? ((finMs || performance.now()) - firstMs) / 1000 : 0;
  const total = c.maxSeq + (finMs > 0 ? 1 : 0);
  const fig = { id: "*1", start: 0, end: seconds, bytes: c.bytes, jitterS: c.jitter, lost: c.lost, total };
  if (plan.csv) io.printer.csvLine(csvUdpLine({ at: finalCsvTime(plan.intervalS), client: local, server, id: 1, start: 0, end: seconds, bytes: c.bytes, jitterS: c.jitter, lost: c.lost, total, outOfOrder: c.outOfOrder, millis: plan.enhanced }));
  else io.printer.report(HEADER_UDP, udpLine(fig, plan.format));
  return 0;
}
