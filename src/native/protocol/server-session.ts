/**
 * The server's end of one native control connection: hello (version, token), the test request, then the client's
 * clock (go, window start/end, finish) until the results go back. The glue (src/native/server.ts) owns the data
 * plane and answers `test` with accept(ports) or refuse(reason).
 */
import { FrameDecoder, encodeFrame } from "./framing.ts";
import { ClientMessage, PROTOCOL_VERSION, decodeMessages, type ServerMessage, type TestRequest } from "./messages.ts";
import { tokensEqual } from "./token.ts";
import { DEADLINE_MS, setUpDeadlineMs, type ControlTransport } from "./transport.ts";
import type { RemoteEnd } from "../../report/result.ts";

export type ServerPhase = "hello" | "test" | "preparing" | "ready" | "running" | "finishing" | "done";

export type ServerEvent =
  | { kind: "test"; test: TestRequest; clientPorts: number[] }
  | { kind: "go" }
  | { kind: "window"; edge: "start" | "end" }
  | { kind: "finish" }
  /** The session is over without results: refused, timed out, protocol error, client gone. */
  | { kind: "closed"; reason: string };

const WAITING_FOR: Record<ServerPhase, ClientMessage["type"][]> = {
  hello: ["hello"],
  test: ["test"],
  preparing: [],
  /** A window with no warm-up opens before "go", so the server has its first snapshot before any byte. */
  ready: ["go", "window"],
  running: ["window", "alive", "finish"],
  finishing: [],
  done: [],
};

export class ServerSession {
  phase: ServerPhase = "hello";
  private readonly decoder = new FrameDecoder();
  private deadline: number | undefined;
  /** The test's streams: its set-up deadline grows with them. */
  private streams = 1;

  constructor(
    private readonly transport: ControlTransport,
    private readonly emit: (e: ServerEvent) => void,
    private readonly opts: { version: string; token?: string; nowMs: number },
  ) {
    this.deadline = opts.nowMs + DEADLINE_MS.handshake;
  }

  receive(bytes: Uint8Array, now: number): void {
    const { messages, error } = decodeMessages(this.decoder, bytes, ClientMessage, "client");
    for (const m of messages) {
      // A message before this one may have ended the session.
      if (this.phase === "done") return;
      this.onMessage(m, now);
    }
    if (error) this.fail(error);
  }

  private onMessage(m: ClientMessage, now: number): void {
    if (m.type === "error") return this.close(`client: ${m.message}`);
    if (!WAITING_FOR[this.phase].includes(m.type)) return this.fail(`unexpected '${m.type}' from the client in phase ${this.phase}`);
    switch (m.type) {
      case "hello": {
        if (m.protocol !== PROTOCOL_VERSION) {
          return this.refuse(`client speaks anyperf protocol ${m.protocol} (anyperf ${m.version}), this server ${PROTOCOL_VERSION} (anyperf ${this.opts.version}): run one anyperf version on both hosts`);
        }
        if (this.opts.token !== undefined && !tokensEqual(m.token, this.opts.token)) {
          return this.refuse(m.token === undefined ? "this server needs a token: pass --token with the server's token" : "wrong token: pass --token with the server's token");
        }
        this.send({ type: "welcome", protocol: PROTOCOL_VERSION, version: this.opts.version });
        if (m.probe) {
          this.phase = "done";
          return this.transport.close();
        }
        this.phase = "test";
        this.deadline = now + DEADLINE_MS.handshake;
        return;
      }
      case "test":
        this.streams = m.test.streams;
        this.phase = "preparing";
        this.deadline = undefined;
        this.emit({ kind: "test", test: m.test, clientPorts: m.clientPorts });
        return;
      case "go":
        this.phase = "running";
        this.deadline = now + DEADLINE_MS.running;
        this.emit({ kind: "go" });
        return;
      case "window":
        this.deadline = now + DEADLINE_MS.running;
        this.emit({ kind: "window", edge: m.edge });
        if (m.edge === "start" && (this.phase as ServerPhase) !== "done") this.send({ type: "started" });
        return;
      case "alive":
        this.deadline = now + DEADLINE_MS.running;
        return;
      case "finish":
        this.phase = "finishing";
        this.deadline = undefined;
        this.emit({ kind: "finish" });
        return;
    }
  }

  /** The data plane is set up: tell the client where to connect. */
  accept(ports: number[], now: number): void {
    if (this.phase !== "preparing") return;
    this.send({ type: "ready", ports });
    this.phase = "ready";
    this.deadline = now + setUpDeadlineMs(DEADLINE_MS.connect, this.streams);
  }

  /** A no the client prints as it is (a limit, busy, a stream that could not open). */
  refuse(reason: string): void {
    if (this.phase === "done") return;
    this.send({ type: "refused", reason });
    this.close(reason);
  }

  sendResults(results: RemoteEnd): void {
    if (this.phase !== "finishing") return;
    this.send({ type: "results", results });
    this.phase = "done";
    this.transport.close();
  }

  /** Ends a running test from the server's side (a limit hit, shutdown); the client prints `message`. */
  abort(message: string): void {
    this.fail(message);
  }

  /** The client's connection closed. */
  eof(): void {
    if (this.phase !== "done") this.close("client closed the control connection");
  }

  /** Call now and then: a client that stays silent past its deadline is dropped. */
  check(now: number): void {
    if (this.deadline !== undefined && now > this.deadline && this.phase !== "done") {
      this.fail(`no message from the client within ${Math.round(this.waitMs() / 1000)} s (phase ${this.phase})`);
    }
  }

  private waitMs(): number {
    if (this.phase === "ready") return setUpDeadlineMs(DEADLINE_MS.connect, this.streams);
    return this.phase === "running" ? DEADLINE_MS.running : DEADLINE_MS.handshake;
  }

  private fail(reason: string): void {
    if (this.phase === "done") return;
    this.send({ type: "error", message: reason });
    this.close(reason);
  }

  private close(reason: string): void {
    this.phase = "done";
    this.deadline = undefined;
    this.transport.close();
    this.emit({ kind: "closed", reason });
  }

  private send(m: ServerMessage): void {
    this.transport.write(encodeFrame(m));
  }
}
