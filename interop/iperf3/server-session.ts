/**
 * One iperf3 test as seen by a server: the control-connection state machine of docs/protocols/iperf3.md §3/§10, over an
 * injected transport. It owns no socket and no timer: the glue pushes bytes (receive/eof), time (tick) and data-plane
 * news (listenerReady, acceptStream, stopped) in, and reacts to the events it gets back. Several sessions can run at
 * once; the glue matches data connections to sessions by cookie.
 *
 * Every phase that waits on the client has a deadline, so a silent or stalled client is dropped with a clear error
 * (SERVER_ERROR while the client still reads state bytes, a plain close once it waits for our results frame).
 */
import { decodeCookie } from "./cookie.ts";
import { Defaults, State, stateName } from "./constants.ts";
import { IErrno } from "./error-codes.ts";
import { Errno } from "../../lib/errno.ts";
import { ClientStreamDecoder, Iperf3ProtocolError, asProtocolError, encodeFrame, encodeServerError, encodeState, type ClientMessage } from "./framing.ts";
import { decodeParams, streamCount, type TestParams } from "./params.ts";
import { decodeResults, encodeResults, type Results } from "./results.ts";
import type { ControlTransport, SessionFailure } from "./transport.ts";

export type StreamRole = "recv" | "send";

export type ServerEvent =
  /** Cookie read and PARAM_EXCHANGE sent; the glue may index the session by cookie now. */
  | { type: "cookie"; cookie: string }
  /** Parameters accepted. Set up the data plane (UDP socket, accept-by-cookie), then call listenerReady or listenerFailed. */
  | { type: "prepare"; params: TestParams }
  /** All streams are in. Hand them to the data plane, then call begin(): TEST_START and TEST_RUNNING go out then. */
  | { type: "streams-ready" }
  /** The client sent TEST_END. Stop and close the data streams, then call stopped() with this side's results. */
  | { type: "stop" }
  | { type: "client-results"; results: Results }
  /** Results exchanged and the client said IPERF_DONE (or closed): a complete test. */
  | { type: "done" }
  /** The test ended early; tear down its data streams. `clientTerminated` for CLIENT_TERMINATE. */
  | { type: "aborted"; failure: SessionFailure; clientTerminated: boolean };

export type ServerPhase =
  | "cookie"
  | "params"
  | "preparing"
  | "creating-streams"
  | "starting"
  | "running"
  | "stopping"
  | "results"
  | "display"
  | "closed";

export interface ServerSessionOptions {
  nowMs: number;
  /** Deadline for the 37-byte cookie after accept. */
  cookieTimeoutMs?: number;
  paramsTimeoutMs?: number;
  /** From CREATE_STREAMS until the last data stream (and UDP hello) is in. */
  streamsTimeoutMs?: number;
  /** For the client's results after EXCHANGE_RESULTS, and for IPERF_DONE after DISPLAY_RESULTS. */
  resultsTimeoutMs?: number;
  /** No byte moved on any data stream for this long while running: abort (3.12's --rcv-timeout, 120 s). */
  idleTimeoutMs?: number;
  /** Cap on a test's length in seconds (--server-max-duration); 0 = only the stock safety timer. */
  maxDurationS?: number;
  /** Refuse tests whose requested total rate (bandwidth x streams) exceeds this (bit/s; 0 = no limit). */
  bitrateLimit?: number;
  limits?: { params: number; results: number };
  /**
   * Set when the server requires credentials: judges a test's authtoken (absent when the client sent none) and
   * returns why it is refused, or undefined to admit it.
   */
  authorize?: (authToken: string | undefined) => string | undefined;
}

export class ServerSession {
  phase: ServerPhase = "cookie";
  cookie?: string;
  params?: TestParams;
  /** Stream ids handed out so far, in acceptance order, with the role this side plays on each. */
  readonly streams: Array<{ id: number; role: StreamRole }> = [];
  clientResults?: Results;

  private readonly decoder: ClientStreamDecoder;
  private readonly pending: ClientMessage[] = [];
  private eofPending = false;
  private deadline: number;
  private startedMs = 0;
  private readonly opts: Required<Omit<ServerSessionOptions, "nowMs" | "limits" | "authorize">>;
  private readonly authorize: ServerSessionOptions["authorize"];
  private local?: Results;

  constructor(
    private readonly transport: ControlTransport,
    private readonly emit: (e: ServerEvent) => void,
    options: ServerSessionOptions,
  ) {
    this.opts = {
      cookieTimeoutMs: options.cookieTimeoutMs ?? 10_000,
      paramsTimeoutMs: options.paramsTimeoutMs ?? 10_000,
      streamsTimeoutMs: options.streamsTimeoutMs ?? 10_000,
      resultsTimeoutMs: options.resultsTimeoutMs ?? 10_000,
      idleTimeoutMs: options.idleTimeoutMs ?? Defaults.rcvTimeoutMs,
      maxDurationS: options.maxDurationS ?? 0,
      bitrateLimit: options.bitrateLimit ?? 0,
    };
    this.authorize = options.authorize;
    this.decoder = new ClientStreamDecoder(options.limits);
    this.deadline = options.nowMs + this.opts.cookieTimeoutMs;
  }

  /** Bytes from the control connection. */
  receive(bytes: Uint8Array, nowMs: number): void {
    if (this.phase === "closed") return;
    try {
      this.pending.push(...this.decoder.push(bytes));
    } catch (e) {
      // Keep what came before the bad bytes in order, then fail.
      this.drain(nowMs);
      if ((this.phase as ServerPhase) !== "closed") this.fail(asProtocolError(e));
      return;
    }
    this.drain(nowMs);
  }

  /** The client closed its side of the control connection. */
  eof(nowMs: number): void {
    if (this.phase === "closed") return;
    this.eofPending = true;
    this.drain(nowMs);
  }

  /**
   * Time passes. `lastDataMs` is when a data stream last moved a byte (from the counters), so an idle test is
   * noticed in either direction.
   */
  tick(nowMs: number, lastDataMs?: number): void {
    if (this.phase === "closed") return;
    if (this.phase === "running" && this.opts.idleTimeoutMs > 0) {
      const since = Math.max(lastDataMs ?? 0, this.startedMs);
      if (nowMs - since >= this.opts.idleTimeoutMs) {
        this.fail(new Iperf3ProtocolError(`no data for ${this.opts.idleTimeoutMs} ms`, IErrno.IENOMSG, Errno.OK));
        return;
      }
    }
    if (nowMs < this.deadline) return;
    switch (this.phase) {
      case "cookie":
        return this.fail(new Iperf3ProtocolError("no cookie from the client in time", IErrno.IERECVCOOKIE, Errno.ETIMEDOUT));
      case "params":
        return this.fail(new Iperf3ProtocolError("no parameters from the client in time", IErrno.IERECVPARAMS, Errno.ETIMEDOUT));
      case "creating-streams":
        return this.fail(
          new Iperf3ProtocolError(`only ${this.streams.length} of ${streamCount(this.params!)} data streams arrived in time`, IErrno.IESTREAMACCEPT, Errno.ETIMEDOUT),
        );
      case "running":
        return this.fail(new Iperf3ProtocolError("the client did not end the test in time", IErrno.IERECVMESSAGE, Errno.ETIMEDOUT));
      case "results":
        return this.fail(new Iperf3ProtocolError("no results from the client in time", IErrno.IERECVRESULTS, Errno.ETIMEDOUT));
      case "display":
        // Results are exchanged; a client that never says IPERF_DONE still had a complete test.
        return this.finish();
      default:
        return; // preparing/starting/stopping wait on the glue, which has its own bounds.
    }
  }

  /** The data listener is up: tell the client to open its streams. */
  listenerReady(nowMs: number): void {
    if (this.phase !== "preparing") return;
    this.phase = "creating-streams";
    this.deadline = nowMs + this.opts.streamsTimeoutMs;
    this.transport.write(encodeState(State.CREATE_STREAMS));
    this.drain(nowMs);
  }

  /** The data listener could not be set up (e.g. UDP port busy): SERVER_ERROR, like 3.12's i_errno 202. */
  listenerFailed(iErrno: number, errno: number, detail: string): void {
    if (this.phase !== "preparing") return;
    this.fail(new Iperf3ProtocolError(detail, iErrno, errno));
  }

  /**
   * A data connection with this session's cookie (TCP) or a hello datagram (UDP) arrived. Returns its stream id and
   * our role on it, or undefined when the session is not accepting streams (answer ACCESS_DENIED and close it).
   */
  acceptStream(nowMs: number): { id: number; role: StreamRole } | undefined {
    if (this.phase !== "creating-streams" || !this.params) return undefined;
    const total = streamCount(this.params);
    const n = this.streams.length;
    if (n >= total) return undefined;
    // Ids go 1, 3, 4, 5, ... on both sides (id 2 is never used), so results match by id.
    const id = n === 0 ? 1 : n + 2;
    const role: StreamRole = this.params.reverse ? "send" : this.params.bidirectional && n >= this.params.parallel ? "send" : "recv";
    const s = { id, role };
    this.streams.push(s);
    if (this.streams.length === total) {
      this.phase = "starting";
      this.emit({ type: "streams-ready" });
    }
    return s;
  }

  /** The data plane holds every stream: start the test (TEST_START, TEST_RUNNING) and its timers. */
  begin(nowMs: number): void {
    if (this.phase !== "starting") return;
    this.startTest(nowMs);
  }

  /** The data streams are stopped and closed; these are this side's results. Starts the results exchange. */
  stopped(local: Results, nowMs: number): void {
    if (this.phase !== "stopping") return;
    this.local = local;
    this.phase = "results";
    this.deadline = nowMs + this.opts.resultsTimeoutMs;
    this.transport.write(encodeState(State.EXCHANGE_RESULTS));
    this.drain(nowMs);
  }

  /** Our server is shutting down (SIGINT/SIGTERM): SERVER_TERMINATE, then close. */
  terminate(): void {
    if (this.phase === "closed") return;
    if (this.phase !== "cookie") this.transport.write(encodeState(State.SERVER_TERMINATE));
    this.close({ type: "aborted", failure: { iErrno: IErrno.IESERVERTERM, detail: "the server has terminated" }, clientTerminated: false });
  }

  /** An error found by the glue (data stream failure, bitrate limit): reported to the client like our own errors. */
  fail(err: Iperf3ProtocolError): void {
    if (this.phase === "closed") return;
    // Once the client waits for our results frame it reads a length, not a state: a SERVER_ERROR there would be
    // misread, so we only close and let it report "unable to receive results".
    // A refused login gets the state and i_errno only, as 3.12-3.18 servers send it (docs/protocols/iperf3.md §2).
    if (this.phase !== "results" && this.phase !== "display") {
      const bytes = encodeServerError(err.iErrno, err.errno);
      this.transport.write(err.iErrno === IErrno.IEAUTHTEST ? bytes.subarray(0, 5) : bytes);
    }
    this.close({ type: "aborted", failure: { iErrno: err.iErrno, errno: err.errno, detail: err.message }, clientTerminated: false });
  }

  get blocked(): boolean {
    return this.phase === "preparing" || this.phase === "starting" || this.phase === "stopping";
  }

  private drain(nowMs: number): void {
    while (this.phase !== "closed" && !this.blocked) {
      // A compliant client sends TEST_END only after its streams are up; one that arrives while streams are still
      // being accepted waits for them (or for the streams deadline) instead of ending a test that never started.
      if (this.phase === "creating-streams" && this.pending[0]?.kind === "state" && this.pending[0].state === State.TEST_END) return;
      const m = this.pending.shift();
      if (m === undefined) break;
      try {
        this.handle(m, nowMs);
      } catch (e) {
        this.fail(asProtocolError(e));
      }
    }
    if (this.eofPending && this.phase !== "closed" && !this.blocked && this.pending.length === 0) this.onEof();
  }

  private onEof(): void {
    if (this.phase === "display") return this.finish();
    this.close({
      type: "aborted",
      failure: { iErrno: IErrno.IECTRLCLOSE, detail: "the client has unexpectedly closed the connection" },
      clientTerminated: false,
    });
  }

  private handle(m: ClientMessage, nowMs: number): void {
    switch (m.kind) {
      case "cookie": {
        const c = decodeCookie(m.bytes);
        if (!c.ok) throw new Iperf3ProtocolError(`bad cookie: ${c.reason}`, IErrno.IERECVCOOKIE, Errno.EINVAL);
        this.cookie = c.cookie;
        this.phase = "params";
        this.deadline = nowMs + this.opts.paramsTimeoutMs;
        this.emit({ type: "cookie", cookie: c.cookie });
        if (this.phase === "params") this.transport.write(encodeState(State.PARAM_EXCHANGE));
        return;
      }
      case "params": {
        const p = decodeParams(m.json);
        const refused = this.authorize?.(p.authToken);
        if (refused !== undefined) throw new Iperf3ProtocolError(refused, IErrno.IEAUTHTEST, Errno.OK);
        // A requested rate above the limit is refused at once; unlimited tests are checked on their measured rate by the glue.
        const total = p.bandwidth * streamCount(p);
        if (this.opts.bitrateLimit > 0 && total > this.opts.bitrateLimit) {
          throw new Iperf3ProtocolError(
            `requested ${total} bit/s exceeds the server limit of ${this.opts.bitrateLimit} bit/s`,
            IErrno.IETOTALRATE,
            Errno.OK,
          );
        }
        this.params = p;
        this.phase = "preparing";
        this.emit({ type: "prepare", params: p });
        return;
      }
      case "results": {
        if (this.phase !== "results") throw new Iperf3ProtocolError("results arrived before EXCHANGE_RESULTS", IErrno.IEMESSAGE, Errno.OK);
        const r = decodeResults(m.json);
        const ours = new Set(this.streams.map((s) => s.id));
        for (const s of r.streams) {
          if (!ours.has(s.id)) throw new Iperf3ProtocolError(`client results name stream ${s.id}, which this test does not have`, IErrno.IESTREAMID, Errno.OK);
        }
        this.clientResults = r;
        this.emit({ type: "client-results", results: r });
        this.transport.write(concat(encodeFrame(encodeResults(this.local!)), encodeState(State.DISPLAY_RESULTS)));
        this.phase = "display";
        this.deadline = nowMs + this.opts.resultsTimeoutMs;
        return;
      }
      case "state":
        return this.onState(m.state);
    }
  }

  private onState(state: number): void {
    switch (state) {
      case State.TEST_START:
        return; // 3.12 servers ignore it too
      case State.TEST_END:
        if (this.phase !== "running") {
          throw new Iperf3ProtocolError(`TEST_END while ${this.phase}`, IErrno.IEMESSAGE, Errno.OK);
        }
        this.phase = "stopping";
        this.emit({ type: "stop" });
        return;
      case State.IPERF_DONE:
        if (this.phase === "display") return this.finish();
        return this.close({ type: "aborted", failure: { iErrno: IErrno.IECTRLCLOSE, detail: `the client quit while ${this.phase}` }, clientTerminated: false });
      case State.CLIENT_TERMINATE:
        return this.close({ type: "aborted", failure: { iErrno: IErrno.IECLIENTTERM, detail: "the client has terminated" }, clientTerminated: true });
      default:
        throw new Iperf3ProtocolError(`unknown control message ${stateName(state)} while ${this.phase}`, IErrno.IEMESSAGE, Errno.OK);
    }
  }

  private startTest(nowMs: number): void {
    const p = this.params!;
    this.phase = "running";
    this.startedMs = nowMs;
    // The stock safety timer (time + omit + 40 s) only exists for timed tests; --server-max-duration caps any test.
    const limits: number[] = [];
    if (p.timeS > 0) limits.push(p.timeS + p.omitS + Defaults.serverSafetyMarginS);
    if (this.opts.maxDurationS > 0) limits.push(this.opts.maxDurationS + p.omitS);
    this.deadline = limits.length > 0 ? nowMs + Math.min(...limits) * 1000 : Number.POSITIVE_INFINITY;
    this.transport.write(concat(encodeState(State.TEST_START), encodeState(State.TEST_RUNNING)));
    this.drain(nowMs);
  }

  private finish(): void {
    this.close({ type: "done" });
  }

  private close(e: ServerEvent): void {
    if (this.phase === "closed") return;
    this.phase = "closed";
    this.pending.length = 0;
    this.transport.close();
    this.emit(e);
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}
