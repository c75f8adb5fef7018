import { describe, expect, test } from "bun:test";
import { ServerSession, type ServerEvent } from "./server-session.ts";
import { ClientSession, type ClientEvent } from "./client-session.ts";
import { FrameDecoder, encodeFrame } from "./framing.ts";
import { PROTOCOL_VERSION, type TestRequest } from "./messages.ts";
import { DEADLINE_MS } from "./transport.ts";
import { concatBytes } from "../../../lib/bytes.ts";
import type { RemoteEnd } from "../../report/result.ts";

const REQ: TestRequest = {
  transport: "tcp", test: "stream", direction: "forward", streams: 2, durationS: 5, bytes: 0, warmupS: 0, cooldownS: 0,
  bufferBytes: 131072, datagramBytes: 1400, bitsPerSecond: 0, packetsPerSecond: 0, requestBytes: 1, responseBytes: 1,
};
const fig = { bytes: 1000, seconds: 1, throughput_bps: 8000 };
const RESULTS: RemoteEnd = {
  version: "0.1.0", role: "server", phases: { warmup_s: 0, measured_s: 1, cooldown_s: 0 }, summary: fig, totals: { received_bytes: 1000 },
  streams: [{ ...fig, id: 0, side: "recv", connections: 1 }], cpu: { busy_percent: 12.5 }, errors: [],
};

function server(opts: { token?: string } = {}) {
  const writes: Uint8Array[] = [];
  const events: ServerEvent[] = [];
  let closed = false;
  const s = new ServerSession({ write: (b) => writes.push(b.slice()), close: () => (closed = true) }, (e) => events.push(e), { version: "0.1.0", nowMs: 0, ...opts });
  const sent = () => writes.flatMap((w) => new FrameDecoder().push(w).frames) as { type: string; reason?: string; message?: string }[];
  return { s, events, sent, closed: () => closed };
}

function client(opts: { token?: string } = {}) {
  const writes: Uint8Array[] = [];
  const events: ClientEvent[] = [];
  let closed = false;
  const c = new ClientSession({ write: (b) => writes.push(b.slice()), close: () => (closed = true) }, (e) => events.push(e), { version: "0.1.0", ...opts });
  const sent = () => writes.flatMap((w) => new FrameDecoder().push(w).frames) as { type: string }[];
  return { c, events, sent, closed: () => closed };
}

const hello = (extra: object = {}) => encodeFrame({ type: "hello", protocol: PROTOCOL_VERSION, tool: "anyperf", version: "0.1.0", ...extra });
const conversation = concatBytes([
  hello({ token: "t0k" }),
  encodeFrame({ type: "test", test: REQ, clientPorts: [] }),
]);
const running = concatBytes([encodeFrame({ type: "window", edge: "start" }), encodeFrame({ type: "go" }), encodeFrame({ type: "alive" }), encodeFrame({ type: "window", edge: "end" }), encodeFrame({ type: "finish" })]);

describe("native server session", () => {
  test("a whole conversation: welcome, test, ready, the client's clock, results", () => {
    const { s, events, sent, closed } = server({ token: "t0k" });
    s.receive(conversation, 1);
    expect(events).toEqual([{ kind: "test", test: REQ, clientPorts: [] }]);
    s.accept([40001, 40002], 2);
    s.receive(running, 3);
    expect(events.slice(1).map((e) => e.kind)).toEqual(["window", "go", "window", "finish"]);
    s.sendResults(RESULTS);
    expect(sent().map((m) => m.type)).toEqual(["welcome", "ready", "started", "results"]);
    expect(closed()).toBe(true);
  });

  test("the same bytes split at every offset give the same events", () => {
    // Each half is what a client sends before it waits: hello + test, then (after ready) its clock.
    for (const [half, other] of [[conversation, running], [running, conversation]] as const) {
      for (let cut = 0; cut <= half.length; cut++) {
        const { s, events } = server({ token: "t0k" });
        const feed = (b: Uint8Array) => {
          s.receive(b, 1);
          if (s.phase === "preparing") s.accept([40001], 1);
        };
        const pieces = half === conversation ? [half.subarray(0, cut), half.subarray(cut), other] : [other, half.subarray(0, cut), half.subarray(cut)];
        for (const p of pieces) feed(p);
        expect(events.map((e) => e.kind)).toEqual(["test", "window", "go", "window", "finish"]);
      }
    }
  });

  test("another protocol version is refused with a one-line reason naming both versions", () => {
    const { s, sent, events, closed } = server();
    s.receive(hello({ protocol: PROTOCOL_VERSION + 1, version: "9.9.9" }), 0);
    const m = sent()[0]!;
    expect(m.type).toBe("refused");
    expect(m.reason).toContain(`protocol ${PROTOCOL_VERSION + 1} (anyperf 9.9.9)`);
    expect(m.reason).not.toContain("\n");
    expect(events[0]?.kind).toBe("closed");
    expect(closed()).toBe(true);
  });

  test("missing and wrong tokens are refused, the right one welcomed", () => {
    const missing = server({ token: "secret" });
    missing.s.receive(hello(), 0);
    expect(missing.sent()[0]).toMatchObject({ type: "refused", reason: expect.stringContaining("needs a token") });
    const wrong = server({ token: "secret" });
    wrong.s.receive(hello({ token: "secreT" }), 0);
    expect(wrong.sent()[0]).toMatchObject({ type: "refused", reason: expect.stringContaining("wrong token") });
    const right = server({ token: "secret" });
    right.s.receive(hello({ token: "secret" }), 0);
    expect(right.sent()[0]?.type).toBe("welcome");
  });

  test("garbage, a message out of order, a field out of bounds: an error line and the connection closed", () => {
    const cases: Uint8Array[] = [
      new TextEncoder().encode("GET / HTTP/1.1\r\n\r\n"),
      Uint8Array.of(0x41, 0x50, 0xff, 0xff, 0xff, 0xff),
      encodeFrame({ type: "go" }),
      encodeFrame({ type: "hello", protocol: 1, tool: "anyperf", version: "x".repeat(65) }),
      concatBytes([hello(), encodeFrame({ type: "test", test: { ...REQ, streams: 10_001 }, clientPorts: [] })]),
      concatBytes([hello(), encodeFrame({ type: "test", test: { ...REQ, extra: 1 }, clientPorts: [] })]),
      encodeFrame([1, 2, 3]),
    ];
    for (const bytes of cases) {
      const { s, sent, events, closed } = server();
      s.receive(bytes, 0);
      expect(sent().at(-1)?.type).toBe("error");
      expect(events.at(-1)?.kind).toBe("closed");
      expect(closed()).toBe(true);
    }
  });

  test("a silent client is dropped at each deadline, never before", () => {
    const { s, events } = server();
    s.check(DEADLINE_MS.handshake - 1);
    expect(events).toEqual([]);
    s.check(DEADLINE_MS.handshake + 1);
    expect(events[0]).toMatchObject({ kind: "closed", reason: expect.stringContaining("no message from the client") });

    const r = server();
    r.s.receive(conversation, 0);
    r.s.accept([1], 0);
    r.s.receive(encodeFrame({ type: "go" }), 0);
    r.s.receive(encodeFrame({ type: "alive" }), DEADLINE_MS.running - 1);
    r.s.check(2 * DEADLINE_MS.running - 2);
    expect(r.events.at(-1)?.kind).toBe("go");
    r.s.check(2 * DEADLINE_MS.running);
    expect(r.events.at(-1)?.kind).toBe("closed");
  });

  test("set-up deadlines grow with the streams: 10,000 get 20 s more to connect, and to be set up", () => {
    const big = { ...REQ, streams: 10_000 };
    const r = server();
    r.s.receive(concatBytes([hello(), encodeFrame({ type: "test", test: big, clientPorts: [] })]), 0);
    r.s.accept([1], 0);
    r.s.check(DEADLINE_MS.connect + 19_999);
    expect(r.events.at(-1)?.kind).toBe("test");
    r.s.check(DEADLINE_MS.connect + 20_001);
    expect(r.events.at(-1)).toMatchObject({ kind: "closed", reason: expect.stringContaining(`within ${(DEADLINE_MS.connect + 20_000) / 1000} s`) });

    const c = client();
    c.c.start(0);
    c.c.receive(encodeFrame({ type: "welcome", protocol: PROTOCOL_VERSION, version: "0.1.0" }), 0);
    c.c.request(big, [], 0);
    c.c.check(DEADLINE_MS.prepare + 19_999);
    expect(c.events.at(-1)?.kind).toBe("welcome");
    c.c.check(DEADLINE_MS.prepare + 20_001);
    expect(c.events.at(-1)).toMatchObject({ kind: "failed", cause: "timeout" });
  });

  test("a probe (anyperf client asking what serves the port) is welcomed and closed without an event to log", () => {
    const p = server();
    p.s.receive(hello({ probe: true }), 0);
    p.s.eof();
    expect(p.sent().map((m) => m.type)).toEqual(["welcome"]);
    expect(p.closed()).toBe(true);
    expect(p.events).toEqual([]);
  });

  test("the client's error and EOF end the session with their reason", () => {
    const a = server();
    a.s.receive(concatBytes([hello(), encodeFrame({ type: "error", message: "client interrupted" })]), 0);
    expect(a.events.at(-1)).toEqual({ kind: "closed", reason: "client: client interrupted" });
    const b = server();
    b.s.eof();
    expect(b.events.at(-1)?.kind).toBe("closed");
  });
});

describe("native client session", () => {
  test("hello carries version and token; welcome, ready, results arrive as events", () => {
    const { c, events, sent, closed } = client({ token: "t" });
    c.start(0);
    expect(sent()[0] as object).toEqual({ type: "hello", protocol: PROTOCOL_VERSION, tool: "anyperf", version: "0.1.0", token: "t" });
    c.receive(encodeFrame({ type: "welcome", protocol: PROTOCOL_VERSION, version: "0.1.0" }), 1);
    c.request(REQ, [], 1);
    c.receive(encodeFrame({ type: "ready", ports: [40001] }), 2);
    c.window("start", 2);
    c.receive(encodeFrame({ type: "started" }), 2);
    c.go();
    c.alive();
    c.window("end", 2);
    c.finish(3);
    c.receive(encodeFrame({ type: "results", results: RESULTS }), 4);
    expect(sent().map((m) => m.type)).toEqual(["hello", "test", "window", "go", "alive", "window", "finish"]);
    expect(events.map((e) => e.kind)).toEqual(["welcome", "ready", "started", "results"]);
    expect(events[3]).toEqual({ kind: "results", results: RESULTS });
    expect(closed()).toBe(true);
  });

  test("stock iperf3's first answer (PARAM_EXCHANGE) means: not an anyperf server", () => {
    const { c, events } = client();
    c.start(0);
    c.receive(Uint8Array.of(0x09), 1);
    expect(events[0]).toMatchObject({ kind: "failed", cause: "not-anyperf", phase: "hello" });
  });

  test("a refusal is passed on as it is; a silent server times out at the deadline", () => {
    const { c, events } = client();
    c.start(0);
    c.receive(encodeFrame({ type: "refused", reason: "wrong token: pass --token with the server's token" }), 1);
    expect(events[0]).toEqual({ kind: "failed", cause: "refused", detail: "wrong token: pass --token with the server's token", phase: "hello" });
    const quiet = client();
    quiet.c.start(0);
    quiet.c.check(DEADLINE_MS.handshake - 1);
    expect(quiet.events).toEqual([]);
    quiet.c.check(DEADLINE_MS.handshake + 1);
    expect(quiet.events[0]).toMatchObject({ kind: "failed", cause: "timeout" });
  });

  test("results out of bounds or out of order fail the session", () => {
    const a = client();
    a.c.start(0);
    a.c.receive(encodeFrame({ type: "results", results: RESULTS }), 1);
    expect(a.events[0]).toMatchObject({ kind: "failed", cause: "server-error" });
    const b = client();
    b.c.start(0);
    b.c.receive(encodeFrame({ type: "welcome", protocol: 1, version: "0.1.0" }), 0);
    b.c.request(REQ, [], 0);
    b.c.receive(encodeFrame({ type: "ready", ports: [0] }), 0);
    expect(b.events.at(-1)).toMatchObject({ kind: "failed", cause: "server-error" });
  });

  test("server messages split at every offset give the same events", () => {
    const welcome = encodeFrame({ type: "welcome", protocol: PROTOCOL_VERSION, version: "0.1.0" });
    const ready = encodeFrame({ type: "ready", ports: [5] });
    for (const which of [welcome, ready]) {
      for (let cut = 0; cut <= which.length; cut++) {
        const { c, events } = client();
        c.start(0);
        const feed = (b: Uint8Array) => {
          c.receive(b, 0);
          if (c.phase === "welcomed") c.request(REQ, [], 0);
        };
        const pieces = which === welcome ? [welcome.subarray(0, cut), welcome.subarray(cut), ready] : [welcome, ready.subarray(0, cut), ready.subarray(cut)];
        for (const p of pieces) feed(p);
        expect(events.map((e) => e.kind)).toEqual(["welcome", "ready"]);
      }
    }
  });

  test("a window start waits for the server's 'started' within the running deadline; a late one after finish is ignored", () => {
    const { c, events } = client();
    c.start(0);
    c.receive(encodeFrame({ type: "welcome", protocol: PROTOCOL_VERSION, version: "0.1.0" }), 0);
    c.request(REQ, [], 0);
    c.receive(encodeFrame({ type: "ready", ports: [1] }), 0);
    c.window("start", 10);
    c.check(10 + DEADLINE_MS.running - 1);
    expect(events.at(-1)?.kind).toBe("ready");
    c.check(10 + DEADLINE_MS.running + 1);
    expect(events.at(-1)).toMatchObject({ kind: "failed", cause: "timeout" });

    const late = client();
    late.c.start(0);
    late.c.receive(encodeFrame({ type: "welcome", protocol: PROTOCOL_VERSION, version: "0.1.0" }), 0);
    late.c.request(REQ, [], 0);
    late.c.receive(encodeFrame({ type: "ready", ports: [1] }), 0);
    late.c.window("start", 0);
    late.c.finish(0);
    late.c.receive(concatBytes([encodeFrame({ type: "started" }), encodeFrame({ type: "results", results: RESULTS })]), 1);
    expect(late.events.map((e) => e.kind)).toEqual(["welcome", "ready", "results"]);
  });
});
