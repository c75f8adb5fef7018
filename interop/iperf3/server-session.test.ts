import { describe, expect, test } from "bun:test";
import { ServerSession, type ServerEvent } from "./server-session.ts";
import { ServerStreamDecoder, encodeFrame, encodeState, type ServerMessage } from "./framing.ts";
import { State } from "./constants.ts";
import { IErrno, describeIperfError } from "./error-codes.ts";
import { Errno } from "../../lib/errno.ts";
import { encodeCookie, generateCookie } from "./cookie.ts";
import type { Results } from "./results.ts";
import { CONTROL_CAPTURES, loadControlCapture, splits, type ControlCapture } from "../../tests/fixtures/iperf3/capture.ts";
import { concatBytes } from "../../lib/bytes.ts";

/** A stand-in for the glue: answers the session at once, the way a fast data plane would. */
class Harness {
  writes: Uint8Array[] = [];
  events: ServerEvent[] = [];
  closed = false;
  now = 0;
  session: ServerSession;
  /** Per-stream results of this side (bytes per stream id). */
  constructor(
    opts: Partial<ConstructorParameters<typeof ServerSession>[2]> = {},
    private readonly listener: "ok" | { iErrno: number; errno: number } = "ok",
    autoAccept = true,
  ) {
    this.session = new ServerSession(
      {
        write: (b) => {
          this.writes.push(b.slice());
          // A client opens its data streams as soon as it reads CREATE_STREAMS, before it sends anything else.
          if (autoAccept && b.length === 1 && b[0] === State.CREATE_STREAMS) {
            while (this.session.phase === "creating-streams") this.session.acceptStream(this.now);
            this.session.begin(this.now);
          }
        },
        close: () => (this.closed = true),
      },
      (e) => this.events.push(e),
      { nowMs: 0, ...opts },
    );
  }

  feed(chunk: Uint8Array): void {
    this.session.receive(chunk, this.now);
    this.settle();
  }

  settle(): void {
    const s = this.session;
    if (s.phase === "preparing") {
      if (this.listener === "ok") s.listenerReady(this.now);
      else s.listenerFailed(this.listener.iErrno, this.listener.errno, "UDP port busy");
    }
    if (s.phase === "stopping") s.stopped(localResults(s), this.now);
  }

  get out(): Uint8Array {
    return concatBytes(this.writes);
  }

  get last(): ServerEvent | undefined {
    return this.events[this.events.length - 1];
  }
}

function localResults(s: ServerSession): Results {
  return {
    cpuUtilTotal: 1,
    cpuUtilUser: 0.5,
    cpuUtilSystem: 0.5,
    senderHasRetransmits: s.streams.some((x) => x.role === "send") ? 0 : -1,
    streams: s.streams.map((x) => ({ id: x.id, bytes: 1000, retransmits: -1, jitterS: 0, errors: 0, packets: 0, startTimeS: 0, endTimeS: 2 })),
  };
}

/** Server bytes with the results frame cut out (its figures differ run to run), plus the decoded results frame. */
function withoutResults(bytes: Uint8Array): { rest: number[]; results?: ServerMessage } {
  const msgs = new ServerStreamDecoder().push(bytes);
  const rest: number[] = [];
  let results: ServerMessage | undefined;
  for (const m of msgs) {
    if (m.kind === "state") rest.push(m.state & 0xff);
    else if (m.kind === "results") results = m;
    else rest.push(...Array.from(encodeServerErrorPayload(m.iErrno, m.errno ?? 0)));
  }
  return { rest, results };
}

function encodeServerErrorPayload(i: number, e: number): Uint8Array {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setInt32(0, i, false);
  new DataView(b.buffer).setInt32(4, e, false);
  return b;
}

const COMPLETE = CONTROL_CAPTURES.filter((n) => !/terminate|error/.test(n));

function replay(c: ControlCapture, chunks: Uint8Array[]): Harness {
  const h = new Harness();
  for (const ch of chunks) h.feed(ch);
  h.session.eof(h.now);
  return h;
}

describe("server session replaying captured clients", () => {
  test.each(COMPLETE)("%s: emits the captured server bytes, whatever the chunking", (name) => {
    const c = loadControlCapture(name);
    const want = withoutResults(c.server);
    const chunkings = [c.segments.filter((s) => s.from === "client").map((s) => s.bytes), ...splits(c.client)];
    for (const chunks of chunkings) {
      const h = replay(c, chunks);
      const got = withoutResults(h.out);
      expect(got.rest).toEqual(want.rest);
      expect(got.results).toBeDefined();
      expect(h.events.map((e) => e.type)).toEqual(["cookie", "prepare", "streams-ready", "stop", "client-results", "done"]);
      expect(h.closed).toBe(true);
    }
  });

  test.each(COMPLETE)("%s: our results name the same stream ids as the stock server's", (name) => {
    const c = loadControlCapture(name);
    const h = replay(c, [c.client]);
    const ids = (m: ServerMessage | undefined) => (m?.kind === "results" ? JSON.parse(new TextDecoder().decode(m.json)).streams.map((s: { id: number }) => s.id) : []);
    expect(ids(withoutResults(h.out).results)).toEqual(ids(withoutResults(c.server).results));
  });

  test("client terminate: the captured server said nothing more; neither do we", () => {
    const c = loadControlCapture("iperf3-client-terminate-control.txt");
    for (const chunks of splits(c.client)) {
      const h = replay(c, chunks);
      expect(Array.from(h.out)).toEqual(Array.from(c.server));
      expect(h.last).toMatchObject({ type: "aborted", clientTerminated: true, failure: { iErrno: IErrno.IECLIENTTERM } });
    }
  });

  test("server terminate mid-test writes SERVER_TERMINATE like the capture", () => {
    const c = loadControlCapture("iperf3-server-terminate-control.txt");
    const h = new Harness();
    const seg = c.segments.filter((s) => s.from === "client");
    h.feed(concatBytes(seg.slice(0, 3).map((s) => s.bytes))); // cookie, length, params
    h.session.terminate();
    expect(Array.from(h.out)).toEqual(Array.from(c.server));
    expect(h.closed).toBe(true);
    expect(h.last).toMatchObject({ type: "aborted", failure: { iErrno: IErrno.IESERVERTERM } });
  });

  test("listener failure sends the captured SERVER_ERROR bytes (202 / EADDRINUSE)", () => {
    const c = loadControlCapture("iperf3-server-error-control.txt");
    const h = new Harness({}, { iErrno: IErrno.IESTREAMLISTEN, errno: Errno.EADDRINUSE });
    h.feed(c.client);
    expect(Array.from(h.out)).toEqual(Array.from(c.server));
    expect(h.closed).toBe(true);
  });
});

describe("stream ids and roles", () => {
  const start = (params: string) => {
    const h = new Harness({}, "ok", false);
    h.session.receive(encodeCookie(generateCookie()), 0);
    h.session.receive(encodeFrame(params), 0);
    h.session.listenerReady(0);
    return h;
  };

  test("bidir -P 2: ids 1,3,4,5; first half received, second half sent", () => {
    const h = start('{"tcp":true,"parallel":2,"bidirectional":true}');
    const got = [1, 2, 3, 4].map(() => h.session.acceptStream(0));
    expect(got).toEqual([
      { id: 1, role: "recv" },
      { id: 3, role: "recv" },
      { id: 4, role: "send" },
      { id: 5, role: "send" },
    ]);
    expect(h.session.acceptStream(0)).toBeUndefined();
    expect(h.session.phase).toBe("starting");
    h.session.begin(0);
    expect(h.session.phase).toBe("running");
    expect(Array.from(h.out.subarray(-2))).toEqual([State.TEST_START, State.TEST_RUNNING]);
  });

  test("-R: every stream is sent by the server", () => {
    const h = start('{"tcp":true,"parallel":3,"reverse":true}');
    expect([1, 2, 3].map(() => h.session.acceptStream(0)!.role)).toEqual(["send", "send", "send"]);
  });

  test("no stream is accepted before CREATE_STREAMS", () => {
    const h = new Harness();
    expect(h.session.acceptStream(0)).toBeUndefined();
  });
});

/** What a stock client would print for what we sent, or undefined if we only closed. */
function clientSees(h: Harness): string | undefined {
  const msgs = new ServerStreamDecoder().push(h.out);
  const err = msgs.find((m) => m.kind === "server-error");
  return err?.kind === "server-error" ? describeIperfError(err.iErrno, err.errno ?? 0) : undefined;
}

describe("bad or idle clients end their own test with a clear error", () => {
  const cookie = () => encodeCookie(generateCookie());

  test("malformed cookie", () => {
    const h = new Harness();
    const bad = cookie();
    bad[5] = 0x21;
    h.feed(bad);
    expect(clientSees(h)).toBe("unable to receive cookie at server: Invalid argument");
    expect(h.closed).toBe(true);
    expect(h.last).toMatchObject({ type: "aborted", failure: { iErrno: IErrno.IERECVCOOKIE } });
  });

  test("oversized parameters", () => {
    const h = new Harness();
    h.feed(cookie());
    h.feed(Uint8Array.of(0, 0, 0x40, 0));
    expect(clientSees(h)).toBe("unable to receive parameters from client: Message too long");
    expect(h.last).toMatchObject({ type: "aborted" });
  });

  test("invalid JSON", () => {
    const h = new Harness();
    h.feed(cookie());
    h.feed(encodeFrame('{"tcp":tru'));
    expect(clientSees(h)).toBe("unable to receive parameters from client: Bad message");
  });

  test("wrong types in params", () => {
    const h = new Harness();
    h.feed(cookie());
    h.feed(encodeFrame('{"tcp":true,"parallel":"four"}'));
    expect(clientSees(h)).toBe("unable to receive parameters from client: Invalid argument");
    const ev = h.last;
    expect(ev?.type === "aborted" && ev.failure.detail).toContain('"parallel"');
  });

  test("unknown state byte mid-test", () => {
    const h = new Harness();
    h.feed(cookie());
    h.feed(encodeFrame('{"tcp":true}'));
    expect(h.session.phase).toBe("running");
    h.feed(Uint8Array.of(0x42));
    expect(clientSees(h)).toBe("received an unknown control message");
    expect(h.last).toMatchObject({ type: "aborted", failure: { iErrno: IErrno.IEMESSAGE } });
  });

  test("a client that connects and sends nothing is dropped at its deadline", () => {
    const h = new Harness({ cookieTimeoutMs: 5000 });
    h.session.tick(4999);
    expect(h.closed).toBe(false);
    h.session.tick(5000);
    expect(clientSees(h)).toBe("unable to receive cookie at server: Connection timed out");
    expect(h.closed).toBe(true);
  });

  test("a client that stops after the cookie is dropped at the params deadline", () => {
    const h = new Harness({ paramsTimeoutMs: 3000 });
    h.feed(cookie());
    h.session.tick(2999);
    expect(h.closed).toBe(false);
    h.session.tick(3000);
    expect(clientSees(h)).toBe("unable to receive parameters from client: Connection timed out");
  });

  test("a client that never opens its streams is dropped", () => {
    const h = new Harness({ streamsTimeoutMs: 1000 }, "ok", false);
    h.session.receive(cookie(), 0);
    h.session.receive(encodeFrame('{"tcp":true,"parallel":2}'), 0);
    h.session.listenerReady(0);
    h.session.acceptStream(0);
    h.session.tick(1000);
    expect(clientSees(h)).toBe("unable to accept stream connection: Connection timed out");
    expect(h.last?.type === "aborted" && h.last.failure.detail).toContain("only 1 of 2");
  });

  test("a test whose data stalls is dropped after the idle timeout", () => {
    const h = new Harness({ idleTimeoutMs: 2000 });
    h.feed(cookie());
    h.feed(encodeFrame('{"tcp":true,"time":100}'));
    h.session.tick(1500, 1000);
    expect(h.closed).toBe(false);
    h.session.tick(3000, 1000);
    expect(clientSees(h)).toBe("idle timeout for receiving data");
  });

  test("a client that never sends TEST_END meets the safety timer (time + omit + 40 s)", () => {
    const h = new Harness({ idleTimeoutMs: 0 });
    h.feed(cookie());
    h.feed(encodeFrame('{"tcp":true,"time":2,"omit":1}'));
    h.session.tick(42_999, 42_999);
    expect(h.closed).toBe(false);
    h.session.tick(43_000, 43_000);
    expect(clientSees(h)).toBe("unable to receive control message: Connection timed out");
  });

  test("--server-max-duration caps -n tests, which have no stock safety timer", () => {
    const h = new Harness({ idleTimeoutMs: 0, maxDurationS: 5 });
    h.feed(cookie());
    h.feed(encodeFrame('{"tcp":true,"time":0,"num":1000000000}'));
    h.session.tick(4999);
    expect(h.closed).toBe(false);
    h.session.tick(5000);
    expect(h.closed).toBe(true);
  });

  test("a stall in the results exchange only closes (the client reads a length there)", () => {
    const h = new Harness({ resultsTimeoutMs: 1000 });
    h.feed(cookie());
    h.feed(encodeFrame('{"tcp":true}'));
    h.feed(encodeState(State.TEST_END));
    expect(h.session.phase).toBe("results");
    const before = h.out.length;
    h.session.tick(1000);
    expect(h.out.length).toBe(before);
    expect(h.closed).toBe(true);
    expect(h.last).toMatchObject({ type: "aborted", failure: { iErrno: IErrno.IERECVRESULTS } });
  });

  test("results naming a stream we do not have", () => {
    const h = new Harness();
    h.feed(cookie());
    h.feed(encodeFrame('{"tcp":true}'));
    h.feed(encodeState(State.TEST_END));
    h.feed(encodeFrame('{"cpu_util_total":0,"cpu_util_user":0,"cpu_util_system":0,"sender_has_retransmits":1,"streams":[{"id":7,"bytes":1,"retransmits":0,"jitter":0,"errors":0,"packets":0}]}'));
    expect(h.last).toMatchObject({ type: "aborted", failure: { iErrno: IErrno.IESTREAMID } });
  });

  test("EOF mid-test", () => {
    const h = new Harness();
    h.feed(cookie());
    h.feed(encodeFrame('{"tcp":true}'));
    h.session.eof(0);
    expect(h.last).toMatchObject({ type: "aborted", failure: { iErrno: IErrno.IECTRLCLOSE } });
  });

  test("a requested rate over --server-bitrate-limit is refused up front", () => {
    const h = new Harness({ bitrateLimit: 1e9 });
    h.feed(cookie());
    h.feed(encodeFrame('{"tcp":true,"parallel":4,"bandwidth":300000000}'));
    expect(clientSees(h)).toBe("total required bandwidth is larger than server limit");
  });

  test("refused credentials: SERVER_ERROR and i_errno 142 only, then close, as the 3.18 server sends them (strace)", () => {
    const seen: Array<string | undefined> = [];
    const h = new Harness({ authorize: (t) => (seen.push(t), t === "good" ? undefined : "user 'mario': wrong password") });
    h.feed(cookie());
    const before = h.out.length;
    h.feed(encodeFrame('{"tcp":true,"authtoken":"bad"}'));
    expect([...h.out.subarray(before)]).toEqual([0xfe, 0, 0, 0, 142]);
    expect(h.closed).toBe(true);
    expect(h.last).toMatchObject({ type: "aborted", failure: { iErrno: IErrno.IEAUTHTEST, detail: "user 'mario': wrong password" } });
    const ok = new Harness({ authorize: (t) => (seen.push(t), t === "good" ? undefined : "no") });
    ok.feed(cookie());
    ok.feed(encodeFrame('{"tcp":true,"authtoken":"good"}'));
    expect(ok.session.phase).toBe("running");
    expect(seen).toEqual(["bad", "good"]);
  });

  test("TEST_END that overtakes the data streams waits for them", () => {
    const h = new Harness({}, "ok", false);
    h.session.receive(cookie(), 0);
    h.session.receive(concatBytes([encodeFrame('{"tcp":true}'), encodeState(State.TEST_END)]), 0);
    h.session.listenerReady(0);
    expect(h.session.phase).toBe("creating-streams");
    h.session.acceptStream(0);
    expect(h.session.phase).toBe("starting");
    h.session.begin(0);
    expect(h.session.phase).toBe("stopping");
    expect(h.events.map((e) => e.type)).toEqual(["cookie", "prepare", "streams-ready", "stop"]);
  });
});
