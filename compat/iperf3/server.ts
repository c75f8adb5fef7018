/**
 * `anyperf iperf3 -s`: a server stock iperf3 clients test against, many at once. Every control connection is its
 * own test (ServerSession); data connections are told apart by their cookie and handed to the engine's Workers.
 * One connection that reads nothing, or a test that stalls, ends at its own deadline and blocks nobody else.
 */
import { explainSocketError } from "../../src/errors.ts";
import { loadNet } from "../../src/net/net.ts";
import type { Net, TcpListener, TcpSocket } from "../../src/net/types.ts";
import { COOKIE_BYTES, decodeCookie } from "../../interop/iperf3/cookie.ts";
import { State } from "../../interop/iperf3/constants.ts";
import { IErrno } from "../../interop/iperf3/error-codes.ts";
import { Errno } from "../../lib/errno.ts";
import { Iperf3ProtocolError, encodeServerError, encodeState } from "../../interop/iperf3/framing.ts";
import { QueuedWriter } from "../../src/net/queued-writer.ts";
import type { FdTools } from "./fd-tools.ts";
import { jsonDocumentText } from "./json-report.ts";
import { Entries } from "../../interop/iperf3/cjson.ts";
import type { Output } from "./output.ts";
import type { ServerPlan } from "./plan.ts";
import { INTERRUPTED, ServerTest } from "./server-test.ts";
import { IPERF_VERSION_STRING, plainAddress, systemInfo } from "./side.ts";
import { UdpAcceptor } from "./udp-acceptor.ts";
import { serverListening } from "./text-report.ts";
import { busyMessage, peerAllowed, serverPolicy, tighter, type Limit, type ServerPolicy, type TestLimits } from "../../src/access/server-policy.ts";
import { RefusalLog } from "../../src/access/refusal-log.ts";

interface ConnState {
  kind: "pending" | "control" | "gone";
  chunks: Uint8Array[];
  length: number;
  timer?: ReturnType<typeof setTimeout>;
  test?: ServerTest;
  writer?: QueuedWriter;
}

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
      if (owner.session.phase === "creating-streams" && owner.params?.protocol === "tcp") owner.addTcpStream(s as TcpSocket<unknown>, all.length - COOKIE_BYTES);
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
    this.nextTest++;
    const t = new ServerTest(this, s as TcpSocket<unknown>, st.writer);
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
    if (this.plan.oneOff && !t.loginRefused) return this.stop(0);
    if (!this.plan.output.json) this.out.out(serverListening(this.plan.port, this.nextTest));
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
