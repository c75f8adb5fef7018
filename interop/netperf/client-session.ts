import { FrameReader } from "./frame-reader.ts";
import { encodePassphrase } from "./minor-messages.ts";
import { encodeOmniRequest, type OmniRequest } from "./omni-request.ts";
import { decodeOmniResponse, type OmniResponse } from "./omni-response.ts";
import { decodeOmniResults, type OmniResults } from "./omni-results.ts";

/**
 * The netperf side of one control connection (docs/protocols/netperf.md §2.5): request, setup reply, data phase (run by
 * the glue), results, optionally more rounds (`-i`), then shutdown(SHUT_WR) and wait for the server's close.
 */

/** What the local data phase measured; the glue fills it from the data plane. */
export interface ClientDataCounters {
  /** Seconds from just before the data loop (including the connect) to after the data socket is torn down. */
  elapsedS: number;
  bytesSent: number;
  bytesReceived: number;
  sendCalls: number;
  recvCalls: number;
  failedSends: number;
  transactions: number;
}

export interface ClientRound {
  response: OmniResponse;
  results: OmniResults;
  local: ClientDataCounters;
}

export type ClientFailure =
  | { kind: "remote-errno"; errno: number; stage: "setup" | "results" }
  | { kind: "timeout"; waitingFor: "response" | "results" }
  | { kind: "closed"; partialBytes: number; waitingFor: "response" | "results" }
  | { kind: "protocol"; detail: string };

export type ClientAction =
  /** The setup reply arrived: run the data phase against `response.dataPort`, then call `dataDone`. */
  | { kind: "start-data"; response: OmniResponse; round: number }
  /** The server failed during the data phase: tear it down, no counters needed. */
  | { kind: "abort-data" }
  /** All rounds done: half-close the control connection and keep reading until EOF. */
  | { kind: "shutdown-write" }
  | { kind: "finished"; rounds: ClientRound[] }
  | { kind: "failed"; failure: ClientFailure };

export interface ClientSessionIo {
  write(bytes: Uint8Array): void;
  close(): void;
  act(action: ClientAction): void;
}

export interface ClientSessionOptions {
  request: OmniRequest;
  /** Most rounds on one connection (netperf -i max); each sends the same request. */
  rounds: number;
  /**
   * Asked after each complete round (results and local counters in) whether another is wanted (netperf -i stops
   * early once its confidence interval is narrow enough); without it, all `rounds` run.
   */
  another?: (done: readonly ClientRound[]) => boolean;
  passphrase?: string;
  /** netperf waits 120 s for the first byte of each reply. */
  responseTimeoutMs: number;
  /** netperf waits 60 s for the server's close after its shutdown. */
  closeTimeoutMs: number;
}

const MIN_FRAMES_AHEAD = 2;

export type ClientState = "new" | "await-response" | "data" | "await-results" | "draining" | "done";

export class NetperfClientSession {
  private readonly frames = new FrameReader();
  private readonly ahead: Uint8Array[] = [];
  private stateValue: ClientState = "new";
  private deadlineMs: number | undefined;
  private round = 0;
  private readonly rounds: ClientRound[] = [];
  private response: OmniResponse | undefined;
  private results: OmniResults | undefined;
  private local: ClientDataCounters | undefined;

  constructor(
    private readonly io: ClientSessionIo,
    private readonly options: ClientSessionOptions,
  ) {}

  get state(): ClientState {
    return this.stateValue;
  }

  nextDeadlineMs(): number | undefined {
    return this.stateValue === "done" ? undefined : this.deadlineMs;
  }

  start(nowMs: number): void {
    if (this.stateValue !== "new") return;
    if (this.options.passphrase !== undefined) this.io.write(encodePassphrase(this.options.passphrase));
    this.sendRequest(nowMs);
  }

  receive(bytes: Uint8Array, nowMs: number): void {
    // Once the session has ended (failed or finished), whatever the server still sends is nobody's business.
    if (this.stateValue === "done") return;
    for (const frame of this.frames.push(bytes)) {
      // A peer can be at most all remaining rounds ahead of us; more is not netserver.
      if (this.ahead.length >= MIN_FRAMES_AHEAD + 2 * this.options.rounds) {
        this.finish({ kind: "failed", failure: { kind: "protocol", detail: "server sent messages nobody asked for" } });
        return;
      }
      this.ahead.push(frame);
    }
    this.drain(nowMs);
  }

  /** Consumes queued frames while the state expects one: a reply never arrives early from a stock server, but a
   * replay or a fast peer may deliver the next round's frames in the same chunk. */
  private drain(nowMs: number): void {
    for (;;) {
      const expecting =
        this.stateValue === "await-response" || ((this.stateValue === "data" || this.stateValue === "await-results") && !this.results);
      if (!expecting) {
        // Stock netserver sends nothing after the last results; stray bytes then are ignored.
        if (this.stateValue === "draining" || this.stateValue === "done") this.ahead.length = 0;
        return;
      }
      const frame = this.ahead.shift();
      if (!frame) return;
      if (this.stateValue === "await-response") this.onResponse(frame);
      else this.onResults(frame, nowMs);
    }
  }

  /** The local data phase is over (by timer, count, or the peer). */
  dataDone(local: ClientDataCounters, nowMs: number): void {
    if (this.stateValue !== "data") return;
    this.local = local;
    if (this.results) {
      this.completeRound(nowMs);
      return;
    }
    this.stateValue = "await-results";
    // The server may run test_length + 4 s past our end (lost UDP end markers, TCP_CRR), so the full reply wait applies.
    this.deadlineMs = nowMs + this.options.responseTimeoutMs;
  }

  controlClosed(_nowMs: number): void {
    if (this.stateValue === "done") return;
    if (this.stateValue === "draining") {
      this.finish({ kind: "finished", rounds: this.rounds });
      return;
    }
    if (this.stateValue === "data") this.io.act({ kind: "abort-data" });
    const waitingFor = this.stateValue === "await-response" || this.stateValue === "new" ? "response" : "results";
    this.finish({ kind: "failed", failure: { kind: "closed", partialBytes: this.frames.pending, waitingFor } });
  }

  tick(nowMs: number): void {
    if (this.deadlineMs === undefined || nowMs < this.deadlineMs) return;
    switch (this.stateValue) {
      case "await-response":
        this.finish({ kind: "failed", failure: { kind: "timeout", waitingFor: "response" } });
        return;
      case "await-results":
        this.finish({ kind: "failed", failure: { kind: "timeout", waitingFor: "results" } });
        return;
      case "draining":
        // netperf gives up waiting for the close after 60 s and reports anyway.
        this.finish({ kind: "finished", rounds: this.rounds });
        return;
      default:
        return;
    }
  }

  private sendRequest(nowMs: number): void {
    this.response = undefined;
    this.results = undefined;
    this.local = undefined;
    this.io.write(encodeOmniRequest(this.options.request));
    this.stateValue = "await-response";
    this.deadlineMs = nowMs + this.options.responseTimeoutMs;
  }

  private onResponse(frame: Uint8Array): void {
    const response = decodeOmniResponse(frame);
    // The type word is not checked by netperf either; serv_errno decides.
    if (response.servErrno !== 0) {
      this.finish({ kind: "failed", failure: { kind: "remote-errno", errno: response.servErrno, stage: "setup" } });
      return;
    }
    this.response = response;
    this.stateValue = "data";
    // The data phase has its own clock; the results wait starts when it ends.
    this.deadlineMs = undefined;
    this.io.act({ kind: "start-data", response, round: this.round });
  }

  private onResults(frame: Uint8Array, nowMs: number): void {
    const results = decodeOmniResults(frame);
    if (results.servErrno !== 0) {
      if (this.stateValue === "data") this.io.act({ kind: "abort-data" });
      this.finish({ kind: "failed", failure: { kind: "remote-errno", errno: results.servErrno, stage: "results" } });
      return;
    }
    this.results = results;
    if (this.stateValue === "await-results") this.completeRound(nowMs);
  }

  private completeRound(nowMs: number): void {
    this.rounds.push({ response: this.response!, results: this.results!, local: this.local! });
    this.round++;
    const wanted = this.options.another?.(this.rounds) ?? true;
    if (this.round < this.options.rounds && wanted) {
      this.sendRequest(nowMs);
      this.drain(nowMs);
      return;
    }
    this.stateValue = "draining";
    this.deadlineMs = nowMs + this.options.closeTimeoutMs;
    this.io.act({ kind: "shutdown-write" });
  }

  private finish(action: Extract<ClientAction, { kind: "finished" | "failed" }>): void {
    this.stateValue = "done";
    this.deadlineMs = undefined;
    this.io.act(action);
    this.io.close();
  }
}
