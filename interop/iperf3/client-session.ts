/**
 * One iperf3 test as seen by a client (docs/protocols/iperf3.md §3/§10), over an injected transport. The glue opens the
 * data streams when asked (create-streams), starts its timers on start/running, decides when the test is over (endTest)
 * and supplies this side's results when the server asks for them (sendResults).
 *
 * The stock client waits forever for the server; we give every wait a deadline and report it like iperf3 would.
 */
import { encodeCookie } from "./cookie.ts";
import { State, stateName } from "./constants.ts";
import { IErrno, describeIperfError } from "./error-codes.ts";
import { Errno } from "../../lib/errno.ts";
import { Iperf3ProtocolError, ServerStreamDecoder, asProtocolError, encodeFrame, encodeState, type ServerMessage } from "./framing.ts";
import { encodeParams, streamCount, type TestParams } from "./params.ts";
import { decodeResults, encodeResults, type Results } from "./results.ts";
import type { ControlTransport, SessionFailure } from "./transport.ts";

export type ClientEvent =
  /** Parameters went out (the server accepted the control connection). */
  | { type: "connected" }
  /** CREATE_STREAMS: open the data streams (TCP: connect + cookie; UDP: hello, wait for the reply), in id order. */
  | { type: "create-streams" }
  /** TEST_START: start timers (the omit timer too). */
  | { type: "start" }
  /** TEST_RUNNING: senders may send. */
  | { type: "running" }
  /** EXCHANGE_RESULTS: stop counting, then call sendResults() with this side's results. */
  | { type: "exchange-results" }
  | { type: "server-results"; results: Results }
  /** DISPLAY_RESULTS arrived, IPERF_DONE is written and the control connection closed: print the report. */
  | { type: "done" }
  /**
   * The test failed. `message` is the text 3.12 prints after "iperf3: error - ". `serverTerminated`: the stock client
   * still prints its partial summary then.
   */
  | { type: "failed"; failure: SessionFailure; message: string; serverTerminated: boolean };

export type ClientPhase = "connecting" | "params" | "create-streams" | "starting" | "running" | "ending" | "results" | "server-results" | "display" | "closed";

export interface ClientSessionOptions {
  cookie: string;
  params: TestParams;
  nowMs: number;
  /** From connect until PARAM_EXCHANGE, and until CREATE_STREAMS after our parameters. */
  setupTimeoutMs?: number;
  /** From CREATE_STREAMS until TEST_START/TEST_RUNNING (the glue's UDP handshakes run in between). */
  startTimeoutMs?: number;
  /** From TEST_END until the server's results and DISPLAY_RESULTS. */
  resultsTimeoutMs?: number;
  maxResultsBytes?: number;
}

export class ClientSession {
  phase: ClientPhase = "connecting";
  serverResults?: Results;

  private readonly decoder: ServerStreamDecoder;
  private readonly pending: ServerMessage[] = [];
  private eofPending = false;
  private deadline = Number.POSITIVE_INFINITY;
  private readonly timeouts: { setup: number; start: number; results: number };
  private params: TestParams;

  constructor(
    private readonly transport: ControlTransport,
    private readonly emit: (e: ClientEvent) => void,
    private readonly opts: ClientSessionOptions,
  ) {
    this.decoder = new ServerStreamDecoder(opts.maxResultsBytes);
    this.timeouts = { setup: opts.setupTimeoutMs ?? 30_000, start: opts.startTimeoutMs ?? 60_000, results: opts.resultsTimeoutMs ?? 30_000 };
    this.params = opts.params;
  }

  /**
   * Replaces the parameters before they are sent: 3.12 sizes UDP blocks from the control connection's MSS, which
   * it reads after writing the cookie (the kernel's MSS changes with the first write).
   */
  setParams(p: TestParams): void {
    if (this.phase !== "connecting" && this.phase !== "params") throw new Error(`parameters already sent (${this.phase})`);
    this.params = p;
  }

  /** The control connection is up: send the cookie. */
  start(nowMs: number): void {
    if (this.phase !== "connecting") return;
    this.phase = "params";
    this.deadline = nowMs + this.timeouts.setup;
    this.transport.write(encodeCookie(this.opts.cookie));
  }

  receive(bytes: Uint8Array, nowMs: number): void {
    if (this.phase === "closed") return;
    try {
      this.pending.push(...this.decoder.push(bytes));
    } catch (e) {
      this.drain(nowMs);
      if ((this.phase as ClientPhase) !== "closed") this.fail(asProtocolError(e), false);
      return;
    }
    this.drain(nowMs);
  }

  eof(nowMs: number): void {
    if (this.phase === "closed") return;
    const last = this.decoder.end();
    if (last) this.pending.push(last);
    this.eofPending = true;
    this.drain(nowMs);
  }

  tick(nowMs: number): void {
    if (this.phase === "closed" || nowMs < this.deadline) return;
    const what: Record<string, [number, string]> = {
      params: [IErrno.IERECVMESSAGE, "the server did not start the parameter exchange in time"],
      "create-streams": [IErrno.IERECVMESSAGE, "the server did not ask for data streams in time"],
      starting: [IErrno.IERECVMESSAGE, "the server did not start the test in time"],
      ending: [IErrno.IERECVMESSAGE, "the server did not answer TEST_END in time"],
      "server-results": [IErrno.IERECVRESULTS, "the server did not send its results in time"],
      display: [IErrno.IERECVMESSAGE, "the server did not finish the results exchange in time"],
    };
    const w = what[this.phase];
    if (w) this.fail(new Iperf3ProtocolError(w[1], w[0], Errno.ETIMEDOUT), false);
  }

  /** Our end condition (time, bytes or blocks) is met: TEST_END. The glue keeps draining receive streams. */
  endTest(nowMs: number): void {
    if (this.phase !== "running" && this.phase !== "starting") return;
    this.phase = "ending";
    this.deadline = nowMs + this.timeouts.results;
    this.transport.write(encodeState(State.TEST_END));
    this.drain(nowMs);
  }

  /** This side's results, after the exchange-results event. */
  sendResults(local: Results, nowMs: number): void {
    if (this.phase !== "results") return;
    this.transport.write(encodeFrame(encodeResults(local)));
    this.phase = "server-results";
    this.deadline = nowMs + this.timeouts.results;
    this.drain(nowMs);
  }

  /** The user interrupted us (SIGINT/SIGTERM): CLIENT_TERMINATE, then close. */
  terminate(): void {
    if (this.phase === "closed") return;
    if (this.phase !== "connecting") this.transport.write(encodeState(State.CLIENT_TERMINATE));
    this.close({
      type: "failed",
      failure: { iErrno: IErrno.IECLIENTTERM, detail: "interrupted" },
      message: describeIperfError(IErrno.IECLIENTTERM, 0),
      serverTerminated: false,
    });
  }

  /** A failure found by the glue (data stream could not connect, UDP hello timed out, ...). */
  fail(err: Iperf3ProtocolError, serverTerminated: boolean): void {
    this.close({
      type: "failed",
      failure: { iErrno: err.iErrno, errno: err.errno, detail: err.message },
      message: describeIperfError(err.iErrno, err.errno),
      serverTerminated,
    });
  }

  private get blocked(): boolean {
    return this.phase === "results";
  }

  private drain(nowMs: number): void {
    while (this.phase !== "closed" && !this.blocked) {
      const m = this.pending.shift();
      if (m === undefined) break;
      try {
        this.handle(m, nowMs);
      } catch (e) {
        this.fail(asProtocolError(e), false);
      }
    }
    if (this.eofPending && this.phase !== "closed" && !this.blocked && this.pending.length === 0) {
      this.fail(new Iperf3ProtocolError("the server closed the control connection", IErrno.IECTRLCLOSE, Errno.OK), false);
    }
  }

  private handle(m: ServerMessage, nowMs: number): void {
    if (m.kind === "server-error") {
      // 3.12 prints the server's i_errno with strerror(errno); a missing errno (auth failure) reads as 0.
      const errno = m.errno ?? 0;
      return this.close({
        type: "failed",
        failure: { iErrno: m.iErrno, errno: m.errno, detail: `the server reported error ${m.iErrno} (errno ${errno})` },
        message: describeIperfError(m.iErrno, errno),
        serverTerminated: false,
      });
    }
    if (m.kind === "results") {
      if (this.phase !== "server-results") throw new Iperf3ProtocolError("results arrived out of order", IErrno.IEMESSAGE, Errno.OK);
      const r = decodeResults(m.json);
      const n = streamCount(this.params);
      for (const s of r.streams) {
        if (s.id < 1 || s.id === 2 || s.id > n + 1) {
          throw new Iperf3ProtocolError(`server results name stream ${s.id}, which this test does not have`, IErrno.IESTREAMID, Errno.OK);
        }
      }
      this.serverResults = r;
      this.phase = "display";
      this.emit({ type: "server-results", results: r });
      return;
    }
    this.onState(m.state, nowMs);
  }

  private onState(state: number, nowMs: number): void {
    switch (state) {
      case State.PARAM_EXCHANGE:
        this.expect("params", state);
        this.transport.write(encodeFrame(encodeParams(this.params)));
        this.phase = "create-streams";
        this.deadline = nowMs + this.timeouts.setup;
        this.emit({ type: "connected" });
        return;
      case State.CREATE_STREAMS:
        this.expect("create-streams", state);
        this.phase = "starting";
        this.deadline = nowMs + this.timeouts.start;
        this.emit({ type: "create-streams" });
        return;
      case State.TEST_START:
        this.expect("starting", state);
        this.emit({ type: "start" });
        return;
      case State.TEST_RUNNING:
        this.expect("starting", state);
        this.phase = "running";
        // The test length is the glue's business; the server never ends a test on its own.
        this.deadline = Number.POSITIVE_INFINITY;
        this.emit({ type: "running" });
        return;
      case State.EXCHANGE_RESULTS:
        if (this.phase !== "ending" && this.phase !== "running") this.unexpected(state);
        this.phase = "results";
        this.emit({ type: "exchange-results" });
        return;
      case State.DISPLAY_RESULTS:
        this.expect("display", state);
        this.transport.write(encodeState(State.IPERF_DONE));
        return this.close({ type: "done" });
      case State.SERVER_ERROR:
        return; // its payload follows as a server-error message
      case State.ACCESS_DENIED:
        return this.close({
          type: "failed",
          failure: { iErrno: IErrno.IEACCESSDENIED, detail: "the server refused the test (busy or bad cookie)" },
          message: describeIperfError(IErrno.IEACCESSDENIED, 0),
          serverTerminated: false,
        });
      case State.SERVER_TERMINATE:
        // Like 3.12: answer IPERF_DONE so the server can close cleanly, then report.
        this.transport.write(encodeState(State.IPERF_DONE));
        return this.fail(new Iperf3ProtocolError("the server has terminated", IErrno.IESERVERTERM, Errno.OK), true);
      default:
        return this.unexpected(state);
    }
  }

  private expect(phase: ClientPhase, state: number): void {
    if (this.phase !== phase) this.unexpected(state);
  }

  private unexpected(state: number): never {
    throw new Iperf3ProtocolError(`unexpected control message ${stateName(state)} while ${this.phase}`, IErrno.IEMESSAGE, Errno.OK);
  }

  private close(e: ClientEvent): void {
    if (this.phase === "closed") return;
    this.phase = "closed";
    this.pending.length = 0;
    this.transport.close();
    this.emit(e);
  }
}
