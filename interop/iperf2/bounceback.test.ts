import { describe, expect, test } from "bun:test";
import { bouncebackCaptures } from "../../tests/fixtures/iperf2/captures.ts";
import { BB_FLAG, bouncebackSize, decodeBounceback, encodeBouncebackReply, isBouncebackFlags } from "./bounceback.ts";
import { BouncebackServerSession } from "./bounceback-server-session.ts";
import { RecordingStream } from "./transport.ts";
import { Iperf2WireError } from "./wire-error.ts";
import { u32 } from "./words.ts";

const cap = bouncebackCaptures();
const get = (label: string, i: number): Uint8Array<ArrayBuffer> => cap.get(label)![i]!;

describe("bounceback codec on captured requests", () => {
  test("2.1.8 and 2.2.1 default requests: 100 bytes, quickack, no hold, reply size = request size", () => {
    for (const label of ["2.1.8", "2.2.1"]) {
      const req = get(label, 0);
      expect(isBouncebackFlags(u32(req, 0))).toBe(true);
      const h = decodeBounceback(req);
      expect(h).toMatchObject({ size: 100, burstId: 1, bbFlags: BB_FLAG.quickAck, holdUs: 0, replySize: 100 });
      expect(h.clientTx.sec).toBe(u32(req, 20));
    }
  });
  test("2.1.8 has payload digits where 2.2.1 has the reply size word: only the flag makes it one", () => {
    expect(Buffer.from(get("2.1.8", 0).subarray(60, 64)).toString()).toBe("0123");
    expect(decodeBounceback(get("2.1.8", 0)).replySize).toBe(100);
    const h = decodeBounceback(get("2.2.1-req200-reply300-hold2", 0));
    expect(h).toMatchObject({ size: 200, replySize: 300, holdUs: 2000, bbFlags: BB_FLAG.quickAck | BB_FLAG.replySize });
  });
  test("--bounceback-hold 2 and --bounceback-no-quickack (2.1.8)", () => {
    expect(decodeBounceback(get("2.1.8-hold2", 0)).holdUs).toBe(2000);
    expect(decodeBounceback(get("2.1.8-no-quickack", 0)).bbFlags).toBe(0);
  });
  test("the reply is the request with the server's two stamps, zero-padded to the reply size (stock servers' replies)", () => {
    for (const label of ["2.1.8", "2.2.1", "2.2.1-req200-reply300-hold2"]) {
      const [req, stockReply] = [get(label, 0), get(label, 1)];
      const rx = { sec: u32(stockReply, 28), usec: u32(stockReply, 32) };
      const tx = { sec: u32(stockReply, 36), usec: u32(stockReply, 40) };
      expect(encodeBouncebackReply(req, decodeBounceback(req).replySize, rx, tx)).toEqual(stockReply);
    }
  });
  test("sizes outside 48..1 MiB and short input are wire errors, not allocations", () => {
    const req = get("2.1.8", 0).slice();
    req.set([0xff, 0xff, 0xff, 0xff], 4);
    expect(() => bouncebackSize(req)).toThrow(Iperf2WireError);
    req.set([0, 0, 0, 8], 4);
    expect(() => decodeBounceback(req)).toThrow(/outside 48/);
    expect(() => decodeBounceback(get("2.1.8", 0).subarray(0, 47))).toThrow(Iperf2WireError);
  });
  test("a client header's flags (version1/extend) are not a bounceback connection", () => {
    expect(isBouncebackFlags(0x40010078)).toBe(false);
    expect(isBouncebackFlags(0x00800000)).toBe(true);
  });
});

function session(holds: Array<() => void> = []) {
  const t = new RecordingStream();
  let clock = 0;
  const ended: number[][] = [];
  const s = new BouncebackServerSession(
    t,
    { now: () => ({ sec: 1000, usec: ++clock }), after: (_us, fn) => holds.push(fn) },
    { started: () => {}, replied: () => {}, end: (received, written, requests) => ended.push([received, written, requests]), error: (e) => { throw e; } },
  );
  return { t, s, ended };
}

describe("bounceback server session", () => {
  test("two captured requests, split at every offset, get two replies of the reply size", () => {
    for (const label of ["2.1.8", "2.2.1-req200-reply300-hold2"]) {
      const req = get(label, 0);
      const stream = new Uint8Array(req.length * 2);
      stream.set(req);
      stream.set(req, req.length);
      for (let cut = 0; cut <= stream.length; cut++) {
        const holds: Array<() => void> = [];
        const { t, s, ended } = session(holds);
        s.onData(stream.subarray(0, cut));
        s.onData(stream.subarray(cut));
        holds.forEach((fn) => fn());
        const h = decodeBounceback(req);
        expect(t.written.length).toBe(2 * h.replySize);
        expect(s.requests).toBe(2);
        const first = t.written.subarray(0, h.replySize);
        expect(first.subarray(0, 28)).toEqual(req.subarray(0, 28));
        expect(u32(first, 28)).toBe(1000);
        s.onEof();
        expect(t.closed).toBe(true);
        expect(ended).toEqual([[2 * req.length, 2 * h.replySize, 2]]);
      }
    }
  });
  test("a hold delays the reply until the timer fires; the send stamp is taken then", () => {
    const holds: Array<() => void> = [];
    const { t, s } = session(holds);
    s.onData(get("2.1.8-hold2", 0));
    expect(t.writes.length).toBe(0);
    holds[0]!();
    expect(t.writes.length).toBe(1);
    expect(u32(t.written, 32)).toBe(1);
    expect(u32(t.written, 40)).toBe(2);
  });
  test("the stop message ends the test without a reply", () => {
    const { t, s, ended } = session();
    const stop = get("2.2.1", 0).slice();
    stop[12] = stop[12]! | (BB_FLAG.stop >> 8);
    s.onData(get("2.2.1", 0));
    s.onData(stop);
    expect(t.writes.length).toBe(1);
    expect(t.closed).toBe(true);
    expect(ended).toEqual([[200, 100, 1]]);
  });
  test("stop(): no reply more, not even a held one; the client's EOF still ends the test with what was counted", () => {
    const holds: Array<() => void> = [];
    const { t, s, ended } = session(holds);
    s.onData(get("2.1.8-hold2", 0));
    s.stop();
    holds.forEach((fn) => fn());
    s.onData(get("2.1.8-hold2", 0));
    expect(t.writes.length).toBe(0);
    expect(t.closed).toBe(false);
    s.onEof();
    expect(t.closed).toBe(true);
    expect(ended).toEqual([[100, 0, 1]]);
  });
});
