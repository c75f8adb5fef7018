import { describe, expect, test } from "bun:test";
import { ClientSession, type ClientEvent } from "./client-session.ts";
import { ClientStreamDecoder, encodeFrame, encodeServerError, encodeState, type ClientMessage } from "./framing.ts";
import { State } from "./constants.ts";
import { IErrno } from "./error-codes.ts";
import { decodeCookie } from "./cookie.ts";
import { decodeParams, TestParams } from "./params.ts";
import type { Results } from "./results.ts";
import { CONTROL_CAPTURES_312, loadControlCapture, splits, type ControlCapture } from "../../tests/fixtures/iperf3/capture.ts";
import { concatBytes } from "../../lib/bytes.ts";

const LOCAL: Results = {
  cpuUtilTotal: 2,
  cpuUtilUser: 1,
  cpuUtilSystem: 1,
  senderHasRetransmits: 0,
  streams: [{ id: 1, bytes: 42, retransmits: -1, jitterS: 0, errors: 0, packets: 0, startTimeS: 0, endTimeS: 2 }],
};

/** Cookie and parameters of a captured client, so our session should write exactly its bytes. */
function captured(c: ControlCapture): { cookie: string; params: TestParams } {
  const msgs = new ClientStreamDecoder().push(c.client);
  const ck = msgs.find((m) => m.kind === "cookie");
  const pm = msgs.find((m) => m.kind === "params");
  if (ck?.kind !== "cookie" || pm?.kind !== "params") throw new Error("capture without cookie/params");
  const d = decodeCookie(ck.bytes);
  if (!d.ok) throw new Error(d.reason);
  const params = decodeParams(pm.json);
  // The captured client did not send client_version twice: drop what decode added for the round trip.
  return { cookie: d.cookie, params: { ...params, clientVersion: undefined } };
}

class Harness {
  writes: Uint8Array[] = [];
  events: ClientEvent[] = [];
  closed = false;
  session: ClientSession;
  constructor(cookie: string, params: TestParams, autoEnd: boolean, opts: Partial<ConstructorParameters<typeof ClientSession>[2]> = {}) {
    this.session = new ClientSession(
      { write: (b) => this.writes.push(b.slice()), close: () => (this.closed = true) },
      (e) => {
        this.events.push(e);
        // The glue: our timer ends the test once running; results are ready at once.
        if (autoEnd && e.type === "running") this.session.endTest(0);
        if (e.type === "exchange-results") this.session.sendResults(LOCAL, 0);
      },
      { cookie, params, nowMs: 0, ...opts },
    );
    this.session.start(0);
  }

  get last(): ClientEvent | undefined {
    return this.events[this.events.length - 1];
  }
}

function clientMessages(bytes: Uint8Array[]): ClientMessage[] {
  const d = new ClientStreamDecoder();
  return bytes.flatMap((b) => d.push(b));
}

/** Client messages with the results frame reduced to its kind (its figures are ours, not the capture's). */
function shape(msgs: ClientMessage[]): unknown[] {
  return msgs.map((m) => (m.kind === "results" ? "results" : m));
}

// Our client announces and encodes as 3.12: its bytes are 3.12's, not a newer client's.
const COMPLETE = CONTROL_CAPTURES_312.filter((n) => !/terminate|error/.test(n));

describe("client session replaying captured servers", () => {
  test.each(COMPLETE)("%s: writes the captured client bytes, whatever the chunking", (name) => {
    const c = loadControlCapture(name);
    const { cookie, params } = captured(c);
    const want = shape(clientMessages([c.client]));
    for (const chunks of [c.segments.filter((s) => s.from === "server").map((s) => s.bytes), ...splits(c.server)]) {
      const h = new Harness(cookie, params, true);
      for (const ch of chunks) h.session.receive(ch, 0);
      expect(shape(clientMessages(h.writes))).toEqual(want);
      expect(h.events.map((e) => e.type)).toEqual(["connected", "create-streams", "start", "running", "exchange-results", "server-results", "done"]);
      expect(h.closed).toBe(true);
    }
  });

  test("the server's results are decoded with -1 mapped", () => {
    const c = loadControlCapture("iperf3-tcp-control.txt");
    const { cookie, params } = captured(c);
    const h = new Harness(cookie, params, true);
    h.session.receive(c.server, 0);
    expect(h.session.serverResults).toMatchObject({ senderHasRetransmits: -1, streams: [{ id: 1, bytes: 5111808, retransmits: -1 }] });
  });

  test("interrupted client: CLIENT_TERMINATE, as captured", () => {
    const c = loadControlCapture("iperf3-client-terminate-control.txt");
    const { cookie, params } = captured(c);
    const h = new Harness(cookie, params, false);
    h.session.receive(c.server, 0);
    h.session.terminate();
    expect(Array.from(concatBytes(h.writes))).toEqual(Array.from(c.client));
    expect(h.last).toMatchObject({ type: "failed", message: "the client has terminated" });
  });

  test("SERVER_TERMINATE: we answer IPERF_DONE and report, as captured", () => {
    const c = loadControlCapture("iperf3-server-terminate-control.txt");
    const { cookie, params } = captured(c);
    for (const chunks of splits(c.server)) {
      const h = new Harness(cookie, params, false);
      for (const ch of chunks) h.session.receive(ch, 0);
      expect(Array.from(concatBytes(h.writes))).toEqual(Array.from(c.client));
      expect(h.last).toMatchObject({ type: "failed", serverTerminated: true, message: "the server has terminated" });
    }
  });

  test("SERVER_ERROR: the captured message", () => {
    const c = loadControlCapture("iperf3-server-error-control.txt");
    const { cookie, params } = captured(c);
    for (const chunks of splits(c.server)) {
      const h = new Harness(cookie, params, false);
      for (const ch of chunks) h.session.receive(ch, 0);
      expect(h.last).toMatchObject({ type: "failed", message: "unable to start stream listener: Address already in use" });
      expect(Array.from(concatBytes(h.writes))).toEqual(Array.from(c.client));
    }
  });

  test("busy server", () => {
    const h = new Harness("a".repeat(36), TestParams.parse({ protocol: "tcp", len: 131072 }), false);
    h.session.receive(encodeState(State.ACCESS_DENIED), 0);
    expect(h.last).toMatchObject({ type: "failed", message: "the server is busy running a test. try again later" });
    expect(h.closed).toBe(true);
  });
});

describe("client session against a misbehaving server", () => {
  const params = TestParams.parse({ protocol: "tcp", len: 131072 });
  const toRunning = (h: Harness) => h.session.receive(Uint8Array.of(9, 10, 1, 2), 0);

  test("unknown state byte", () => {
    const h = new Harness("b".repeat(36), params, false);
    toRunning(h);
    h.session.receive(Uint8Array.of(0x33), 0);
    expect(h.last).toMatchObject({ type: "failed", failure: { iErrno: IErrno.IEMESSAGE }, message: "received an unknown control message" });
  });

  test("states out of order", () => {
    const h = new Harness("b".repeat(36), params, false);
    h.session.receive(Uint8Array.of(State.TEST_RUNNING), 0);
    expect(h.last).toMatchObject({ type: "failed", failure: { iErrno: IErrno.IEMESSAGE } });
  });

  test("results naming a stream we do not have", () => {
    const h = new Harness("b".repeat(36), params, true);
    toRunning(h);
    h.session.receive(encodeState(State.EXCHANGE_RESULTS), 0);
    h.session.receive(
      encodeFrame('{"cpu_util_total":0,"cpu_util_user":0,"cpu_util_system":0,"sender_has_retransmits":-1,"streams":[{"id":3,"bytes":1,"retransmits":-1,"jitter":0,"errors":0,"packets":0}]}'),
      0,
    );
    expect(h.last).toMatchObject({ type: "failed", message: "stream has an invalid id" });
  });

  test("incomplete results", () => {
    const h = new Harness("b".repeat(36), params, true);
    toRunning(h);
    h.session.receive(encodeState(State.EXCHANGE_RESULTS), 0);
    h.session.receive(encodeFrame('{"streams":[]}'), 0);
    expect(h.last).toMatchObject({ type: "failed", message: "unable to receive results: Invalid argument" });
  });

  test("the server closes early", () => {
    const h = new Harness("b".repeat(36), params, false);
    toRunning(h);
    h.session.eof(0);
    expect(h.last).toMatchObject({ type: "failed", message: "control socket has closed unexpectedly" });
  });

  test("a silent server is given up on", () => {
    const h = new Harness("b".repeat(36), params, false, { setupTimeoutMs: 1000 });
    h.session.tick(999);
    expect(h.closed).toBe(false);
    h.session.tick(1000);
    expect(h.last).toMatchObject({ type: "failed", message: "unable to receive control message: Connection timed out" });
  });

  test("a server that never answers TEST_END is given up on", () => {
    const h = new Harness("b".repeat(36), params, true, { resultsTimeoutMs: 500 });
    toRunning(h);
    h.session.tick(499);
    expect(h.closed).toBe(false);
    h.session.tick(500);
    expect(h.closed).toBe(true);
  });

  test("SERVER_ERROR at any time, and the 4-byte auth-failure variant at EOF", () => {
    const h = new Harness("b".repeat(36), params, false);
    toRunning(h);
    h.session.receive(encodeServerError(IErrno.IENOMSG, 0), 0);
    expect(h.last).toMatchObject({ type: "failed", message: "idle timeout for receiving data" });
    const g = new Harness("b".repeat(36), params, false);
    g.session.receive(Uint8Array.of(9, 0xfe, 0, 0, 0, 142), 0);
    g.session.eof(0);
    expect(g.last).toMatchObject({ type: "failed", message: "test authorization failed" });
  });
});

test("parameters set after the cookie (UDP block from the MSS) are the ones sent; once sent they are fixed", () => {
  const first = TestParams.parse({ protocol: "udp", len: 1460, bandwidth: 1e6 });
  const h = new Harness("a".repeat(36), first, false);
  h.session.setParams({ ...first, len: 32768 });
  h.session.receive(encodeState(State.PARAM_EXCHANGE), 1);
  const sent = clientMessages(h.writes).find((m) => m.kind === "params");
  expect(sent?.kind === "params" && decodeParams(sent.json).len).toBe(32768);
  expect(() => h.session.setParams(first)).toThrow("parameters already sent");
});
