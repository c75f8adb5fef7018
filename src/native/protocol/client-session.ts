/**
 * The client's end of the native control connection. The glue (src/native/client.ts) drives it: start() says hello,
 * request() asks for the test once welcomed, go/window/finish carry the client's clock, and the server's results
 * come back as an event. Every wait for the server has a deadline (check()).
 */
import { FrameDecoder, encodeFrame } from "./framing.ts";
import { PROTOCOL_VERSION, ServerMessage, decodeMessages, type ClientMessage, type TestRequest } from "./messages.ts";
import { DEADLINE_MS, setUpDeadlineMs, type ControlTransport } from "./transport.ts";
import type { RemoteEnd } from "../../report/result.ts";

export type ClientPhase = "hello" | "welcomed" | "requesting" | "running" | "finishing" | "done";

/**
 * Why a session failed, for the glue's one line: the server said no (`refused`, its reason is the line), it spoke
 * something else (`not-anyperf`), it stayed silent (`timeout`), it closed, or it sent an error.
 */
export type FailureCause = "refused" | "not-anyperf" | "timeout" | "closed" | "server-error";

export type ClientEvent =
  | { kind: "welcome"; version: string }
  | { kind: "ready"; ports: number[] }
  /** The server cut its window start (the answer to window start). */
  | { kind: "started" }
  | { kind: "results"; results: RemoteEnd }
  | { kind: "failed"; cause: FailureCause; detail: string; phase: ClientPhase };

export class ClientSession {
  phase: ClientPhase = "hello";
  private readonly decoder = new FrameDecoder();
  private deadline: number | undefined;
  private waitMs = 0;
  private sawFrame = false;

  constructor(
    private readonly transport: ControlTransport,
    private readonly emit: (e: ClientEvent) => void,
    private readonly opts: { version: string; token?: string },
  ) {}

  start(now: number): void {
    this.send({ type: "hello", protocol: PROTOCOL_VERSION, tool: "anyperf", version: this.opts.version, token: this.opts.token });
    this.wait(now, DEADLINE_MS.handshake);
  }

  request(test: TestRequest, clientPorts: number[], now: number): void {
    if (this.phase !== "welcomed") return;
    this.phase = "requesting";
    this.send({ type: "test", test, clientPorts });
    this.wait(now, setUpDeadlineMs(DEADLINE_MS.prepare, test.streams));
  }

  go(): void {
    if (this.phase !== "running") return;
    this.send({ type: "go" });
  }

  /**
   * `now`: a window start waits for the server's "started" (it may hold the first byte back until then), as long as
   * any running message: the control connection may cross a path that a load already fills (--responsiveness starts
   * its probe's window beside a running load; a 200 ms queue dropping on tbf took the answer past 5 s).
   */
  window(edge: "start" | "end", now: number): void {
    if (this.phase !== "running") return;
    this.send({ type: "window", edge });
    if (edge === "start") this.wait(now, DEADLINE_MS.running);
  }

  alive(): void {
    if (this.phase === "running") this.send({ type: "alive" });
  }

  finish(now: number): void {
    if (this.phase !== "running") return;
    this.phase = "finishing";
    this.send({ type: "finish" });
    this.wait(now, DEADLINE_MS.results);
  }

  /** Gives up (Ctrl+C, a local error): the server is told why and tears its end down. */
  abort(message: string): void {
    if (this.phase === "done") return;
    this.send({ type: "error", message });
    this.phase = "done";
    this.deadline = undefined;
    this.transport.close();
  }

  receive(bytes: Uint8Array, _now: number): void {
    const { messages, error } = decodeMessages(this.decoder, bytes, ServerMessage, "server");
    for (const m of messages) {
      // A message before this one may have ended the session.
      if (this.phase === "done") return;
      this.sawFrame = true;
      this.onMessage(m);
    }
    // Bytes that are not our protocol before any message of it: another kind of server.
    if (error && this.phase !== "done") this.fail(this.sawFrame ? "server-error" : "not-anyperf", error);
  }

  private onMessage(m: ServerMessage): void {
    if (m.type === "refused") return this.fail("refused", m.reason);
    if (m.type === "error") return this.fail("server-error", m.message);
    if (m.type === "started") {
      // After "finish" (a short run) the answer is late, not wrong; the results deadline stands.
      if (this.phase === "finishing") return;
      if (this.phase === "running") {
        this.deadline = undefined;
        return this.emit({ kind: "started" });
      }
    }
    const expected = { hello: "welcome", requesting: "ready", finishing: "results" } as Partial<Record<ClientPhase, ServerMessage["type"]>>;
    if (expected[this.phase] !== m.type) return this.fail("server-error", `unexpected '${m.type}' from the server in phase ${this.phase}`);
    this.deadline = undefined;
    switch (m.type) {
      case "welcome":
        this.phase = "welcomed";
        return this.emit({ kind: "welcome", version: m.version });
      case "ready":
        this.phase = "running";
        return this.emit({ kind: "ready", ports: m.ports });
      case "results":
        this.phase = "done";
        this.transport.close();
        return this.emit({ kind: "results", results: m.results });
    }
  }

  eof(): void {
    if (this.phase !== "done") this.fail("closed", `the server closed the control connection (phase ${this.phase})`);
  }

  check(now: number): void {
    if (this.deadline !== undefined && now > this.deadline && this.phase !== "done") {
      this.fail("timeout", `no answer within ${Math.round(this.waitMs / 1000)} s (phase ${this.phase})`);
    }
  }

  private wait(now: number, ms: number): void {
    this.waitMs = ms;
    this.deadline = now + ms;
  }

  private fail(cause: FailureCause, detail: string): void {
    const phase = this.phase;
    this.phase = "done";
    this.deadline = undefined;
    this.transport.close();
    this.emit({ kind: "failed", cause, detail, phase });
  }

  private send(m: ClientMessage): void {
    this.transport.write(encodeFrame(m));
  }
}
