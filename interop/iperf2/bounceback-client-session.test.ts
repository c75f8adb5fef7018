import { describe, expect, test } from "bun:test";
import { bouncebackCaptures, splits } from "../../tests/fixtures/iperf2/captures.ts";
import { BB_FLAG, type BbStamp, encodeBouncebackRequest } from "./bounceback.ts";
import { type BouncebackClientOptions, BouncebackClientSession } from "./bounceback-client-session.ts";
import { RecordingStream } from "./transport.ts";
import { Iperf2WireError } from "./wire-error.ts";
import { u16, u32 } from "./words.ts";

const cap = bouncebackCaptures();
const get = (label: string, i: number): Uint8Array<ArrayBuffer> => cap.get(label)![i]!;
const stampOf = (req: Uint8Array): BbStamp => ({ sec: u32(req, 20), usec: u32(req, 24) });

/** A hand-driven clock: time moves only when the test says, timers fire when it passes them. */
class FakeClock {
  ms = 1000;
  wallStamp: BbStamp = { sec: 0, usec: 0 };
  timers: { atMs: number; fn: () => void; live: boolean }[] = [];
  nowMs = () => this.ms;
  wall = () => this.wallStamp;
  at = (atMs: number, fn: () => void) => {
    const t = { atMs, fn, live: true };
    this.timers.push(t);
    return () => void (t.live = false);
  };
  advance(toMs: number): void {
    this.ms = toMs;
    for (const t of this.timers.filter((x) => x.live && x.atMs <= toMs)) {
      t.live = false;
      t.fn();
    }
  }
}

const DEFAULTS: BouncebackClientOptions = { size: 100, replySize: 100, burst: 10, periodMs: 1000, holdUs: 0, quickAck: true, tos: 0, durationMs: 0 };

function session(o: Partial<BouncebackClientOptions> = {}) {
  const clock = new FakeClock();
  const t = new RecordingStream();
  const trips: number[] = [];
  const errors: Iperf2WireError[] = [];
  let closed = 0;
  const s = new BouncebackClientSession(t, clock, { ...DEFAULTS, ...o }, {
    sent: () => {},
    roundTrip: (sec) => trips.push(sec),
    closed: () => closed++,
    error: (e) => errors.push(e),
  });
  return { s, t, clock, trips, errors, closed: () => closed };
}

describe("bounceback client session", () => {
  test("its request is byte for byte the stock client's (2.1.8 default, 2.1.8 no-quickack and hold 2, 2.2.1 request 200 / reply 300)", () => {
    const cases: [string, Partial<BouncebackClientOptions>][] = [
      ["2.1.8", {}],
      ["2.1.8-no-quickack", { quickAck: false }],
      ["2.1.8-hold2", { holdUs: 2000 }],
      ["2.2.1-req200-reply300-hold2", { size: 200, replySize: 300, holdUs: 2000 }],
    ];
    for (const [label, o] of cases) {
      const { s, t, clock } = session(o);
      clock.wallStamp = stampOf(get(label, 0));
      s.start();
      expect(t.writes).toEqual([get(label, 0)]);
    }
  });

  test("-S sets the TOS word and its flag (stock leaves the filler without it)", () => {
    const req = encodeBouncebackRequest({ ...DEFAULTS, tos: 0x10, burstId: 1, clientTx: { sec: 1, usec: 2 } });
    expect(u16(req, 12)).toBe(BB_FLAG.quickAck | BB_FLAG.tos);
    expect(u16(req, 14)).toBe(0x10);
  });

  test("a reply size a request cannot hold is refused before anything is written", () => {
    expect(() => encodeBouncebackRequest({ ...DEFAULTS, size: 60, replySize: 300, burstId: 1, clientTx: { sec: 0, usec: 0 } })).toThrow(/64 or more/);
  });

  test("the stock server's reply, whole and split at every offset, is one round trip timed on our clock; the next request follows in the burst", () => {
    for (const [label, o] of [["2.1.8", {}], ["2.2.1-req200-reply300-hold2", { size: 200, replySize: 300, holdUs: 2000 }]] as const) {
      const reply = get(label, 1);
      for (const [a, b] of splits(reply)) {
        const { s, t, clock, trips, errors } = session(o);
        s.start();
        clock.ms += 0.25;
        s.onData(a);
        expect(trips).toEqual(b.length === 0 ? [0.00025] : []);
        s.onData(b);
        expect(errors).toEqual([]);
        expect(trips).toEqual([0.00025]);
        expect([s.roundTrips, s.sent, s.received]).toEqual([1, o.size ?? 100, o.replySize ?? 100]);
        expect(t.writes.length).toBe(2);
        expect(u32(t.writes[1]!, 8)).toBe(1);
      }
    }
  });

  test("a burst whose period ran out gives up its last requests; the next burst goes at the next tick with that tick's id", () => {
    const { s, t, clock } = session({ burst: 3 });
    const reply = get("2.1.8", 1);
    s.start();
    s.onData(reply);
    expect(t.writes.length).toBe(2);
    clock.ms = 3500; // the reply of the 2nd request comes after ticks 1 and 2 passed
    s.onData(reply);
    expect(t.writes.length).toBe(2);
    clock.advance(4000);
    expect(t.writes.length).toBe(3);
    expect(u32(t.writes[2]!, 8)).toBe(4);
    s.onData(reply);
    s.onData(reply);
    s.onData(reply);
    expect(t.writes.length).toBe(5);
    expect(s.roundTrips).toBe(5);
  });

  test("a tick's timer that fires a little early (Bun rounds to the millisecond) starts its burst once, not twice", () => {
    const { s, t, clock } = session({ burst: 3 });
    const reply = get("2.1.8", 1);
    s.start();
    for (let i = 0; i < 3; i++) s.onData(reply);
    expect(t.writes.length).toBe(3);
    const tick = clock.timers.find((x) => x.live)!;
    expect(tick.atMs).toBe(2000);
    clock.ms = 1999.6;
    tick.live = false;
    tick.fn();
    for (const at of [1999.7, 1999.8, 2000.1]) {
      clock.ms = at;
      s.onData(reply);
    }
    // Burst 2 made its 3 requests and no more; the next tick is burst 3's.
    expect(t.writes.map((w) => u32(w, 8))).toEqual([1, 1, 1, 2, 2, 2]);
    expect(clock.timers.filter((x) => x.live).map((x) => x.atMs)).toEqual([3000]);
  });

  test("-t: no burst starts on or after the end, even when its tick fires before the stop", () => {
    const { s, t, clock } = session({ burst: 1, durationMs: 2000 });
    s.start();
    s.onData(get("2.1.8", 1));
    clock.advance(2000);
    s.onData(get("2.1.8", 1));
    clock.advance(3000);
    expect(t.writes.map((w) => u32(w, 8))).toEqual([1, 2]);
  });

  test("--bounceback-period 0: requests back to back, each its own burst id", () => {
    const { s, t } = session({ periodMs: 0, burst: 1 });
    s.start();
    for (let i = 0; i < 4; i++) s.onData(get("2.1.8", 1));
    expect(t.writes.map((w) => u32(w, 8))).toEqual([1, 2, 3, 4, 5]);
  });

  test("stop(): our FIN, no more requests, a late reply not counted; the server's close ends it", () => {
    const { s, t, closed } = session();
    s.start();
    s.stop();
    s.onData(get("2.1.8", 1));
    expect([t.ended, t.writes.length, s.roundTrips]).toEqual([true, 1, 0]);
    s.onEof();
    expect(closed()).toBe(1);
  });

  test("bytes that are not a bounceback reply, or that no request asked for, end the test with a wire error", () => {
    const a = session();
    a.s.start();
    a.s.onData(new Uint8Array(100));
    expect(a.errors[0]?.message).toMatch(/not a bounceback reply/);
    expect(a.t.ended).toBe(true);
    const b = session({ burst: 1 });
    b.s.start();
    const two = new Uint8Array(200);
    two.set(get("2.1.8", 1));
    two.set(get("2.1.8", 1), 100);
    // A burst of one: after the first reply the next request waits for its tick, so the second 100 bytes answer nothing.
    b.s.onData(two);
    expect(b.errors[0]?.message).toMatch(/no request asked for/);
  });
});
