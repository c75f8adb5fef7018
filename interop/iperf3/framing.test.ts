import { describe, expect, test } from "bun:test";
import {
  ClientStreamDecoder,
  Iperf3ProtocolError,
  ServerStreamDecoder,
  encodeFrame,
  encodeServerError,
  encodeState,
  type ClientMessage,
  type ServerMessage,
} from "./framing.ts";
import { State, stateByte } from "./constants.ts";
import { IErrno, describeIperfError } from "./error-codes.ts";
import { Errno } from "../../lib/errno.ts";
import { CONTROL_CAPTURES, loadControlCapture, splits } from "../../tests/fixtures/iperf3/capture.ts";
import { concatBytes } from "../../lib/bytes.ts";

function reencode(m: ClientMessage | ServerMessage): Uint8Array {
  switch (m.kind) {
    case "cookie":
      return m.bytes;
    case "params":
    case "results": {
      const out = new Uint8Array(4 + m.json.length);
      new DataView(out.buffer).setUint32(0, m.json.length, false);
      out.set(m.json, 4);
      return out;
    }
    case "state":
      return Uint8Array.of(m.state & 0xff);
    case "server-error":
      // The SERVER_ERROR state byte came as its own message; this is the payload after it.
      return encodeServerError(m.iErrno, m.errno ?? 0).subarray(1);
  }
}

function feed<M>(d: { push(c: Uint8Array): M[] }, chunks: Uint8Array[]): M[] {
  return chunks.flatMap((c) => d.push(c));
}

describe("client -> server stream", () => {
  test.each(CONTROL_CAPTURES)("%s: every split gives the same messages, which re-encode to the capture", (name) => {
    const c = loadControlCapture(name);
    const bySegment = feed(new ClientStreamDecoder(), c.segments.filter((s) => s.from === "client").map((s) => s.bytes));
    expect(concatBytes(bySegment.map(reencode))).toEqual(c.client);
    expect(bySegment[0]!.kind).toBe("cookie");
    for (const chunks of splits(c.client)) expect(feed(new ClientStreamDecoder(), chunks)).toEqual(bySegment);
    // One byte at a time too.
    const bytewise = feed(new ClientStreamDecoder(), Array.from(c.client, (b) => Uint8Array.of(b)));
    expect(bytewise).toEqual(bySegment);
  });

  test("a normal test has cookie, params, TEST_END, results, IPERF_DONE", () => {
    const c = loadControlCapture("iperf3-tcp-control.txt");
    const kinds = new ClientStreamDecoder().push(c.client).map((m) => (m.kind === "state" ? m.state : m.kind));
    expect(kinds).toEqual(["cookie", "params", State.TEST_END, "results", State.IPERF_DONE]);
  });

  test("CLIENT_TERMINATE where a frame is due is a state, not a length", () => {
    const d = new ClientStreamDecoder();
    d.push(new Uint8Array(37));
    expect(d.push(encodeState(State.CLIENT_TERMINATE))).toEqual([{ kind: "state", state: State.CLIENT_TERMINATE }]);
  });

  test("oversized parameter JSON fails before any allocation", () => {
    const d = new ClientStreamDecoder();
    d.push(new Uint8Array(37));
    const len = Uint8Array.of(0, 0, 0x20, 0x01); // 8193 bytes
    try {
      d.push(len);
      throw new Error("no error");
    } catch (e) {
      expect(e).toBeInstanceOf(Iperf3ProtocolError);
      const err = e as Iperf3ProtocolError;
      expect(err.iErrno).toBe(IErrno.IERECVPARAMS);
      expect(err.errno).toBe(Errno.EMSGSIZE);
      expect(err.message).toContain("8193");
    }
    expect(() => d.push(Uint8Array.of(0))).toThrow(Iperf3ProtocolError);
  });

  test("a garbage length (e.g. an HTTP request) fails as too long", () => {
    const d = new ClientStreamDecoder();
    d.push(new Uint8Array(37));
    expect(() => d.push(new TextEncoder().encode("GET /"))).toThrow(/exceeds/);
  });

  test("oversized results fail with IERECVRESULTS", () => {
    const d = new ClientStreamDecoder({ params: 8192, results: 100 });
    d.push(new Uint8Array(37));
    d.push(encodeFrame("{}"));
    d.push(encodeState(State.TEST_END));
    expect(() => d.push(Uint8Array.of(0, 0, 0, 101))).toThrow(expect.objectContaining({ iErrno: IErrno.IERECVRESULTS }));
  });
});

describe("server -> client stream", () => {
  test.each(CONTROL_CAPTURES)("%s: every split gives the same messages, which re-encode to the capture", (name) => {
    const c = loadControlCapture(name);
    const bySegment = feed(new ServerStreamDecoder(), c.segments.filter((s) => s.from === "server").map((s) => s.bytes));
    expect(concatBytes(bySegment.map(reencode))).toEqual(c.server);
    for (const chunks of splits(c.server)) expect(feed(new ServerStreamDecoder(), chunks)).toEqual(bySegment);
  });

  test("a normal test: PARAM_EXCHANGE, CREATE_STREAMS, START, RUNNING, EXCHANGE, results, DISPLAY", () => {
    const c = loadControlCapture("iperf3-reverse-control.txt");
    const kinds = new ServerStreamDecoder().push(c.server).map((m) => (m.kind === "state" ? m.state : m.kind));
    expect(kinds).toEqual([9, 10, 1, 2, 13, "results", 14]);
  });

  test("SERVER_ERROR payload (captured: 202 / 98)", () => {
    const c = loadControlCapture("iperf3-server-error-control.txt");
    const msgs = new ServerStreamDecoder().push(c.server);
    expect(msgs).toEqual([
      { kind: "state", state: State.PARAM_EXCHANGE },
      { kind: "state", state: State.SERVER_ERROR },
      { kind: "server-error", iErrno: 202, errno: 98 },
    ]);
    expect(describeIperfError(202, 98)).toBe(c.output.client!.split("\n")[1]!.replace("iperf3: error - ", ""));
  });

  test("SERVER_ERROR cut after i_errno (3.12 auth failure) is reported at EOF", () => {
    const d = new ServerStreamDecoder();
    d.push(Uint8Array.of(stateByte(State.SERVER_ERROR), 0, 0, 0, 142));
    expect(d.end()).toEqual({ kind: "server-error", iErrno: 142 });
  });

  test("SERVER_TERMINATE where the results frame is due", () => {
    const d = new ServerStreamDecoder();
    d.push(encodeState(State.EXCHANGE_RESULTS));
    expect(d.push(encodeState(State.SERVER_TERMINATE))).toEqual([{ kind: "state", state: State.SERVER_TERMINATE }]);
  });
});
