import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { type CapturedMessage, allMessages, splits } from "../../tests/fixtures/iperf2/captures.ts";
import { encodeServerAck } from "./server-ack.ts";
import { type TcpServerTest, TcpServerSession } from "./tcp-server-session.ts";
import { RecordingStream } from "./transport.ts";
import { Iperf2WireError } from "./wire-error.ts";

interface Run {
  session: TcpServerSession;
  stream: RecordingStream;
  tests: TcpServerTest[];
  ends: number[];
  errors: Iperf2WireError[];
}

function run(): Run {
  const stream = new RecordingStream();
  const r: Run = { session: undefined as unknown as TcpServerSession, stream, tests: [], ends: [], errors: [] };
  r.session = new TcpServerSession(stream, {
    test: (t) => r.tests.push(t),
    end: (n) => r.ends.push(n),
    error: (e) => r.errors.push(e),
  });
  return r;
}

/** Each captured TCP test connection's first client bytes: the header segment followed by the first data segment's prefix. */
function connections(): { command: string; bytes: Uint8Array; headerLength: number; ack: Uint8Array | undefined }[] {
  const msgs = allMessages().filter((m) => m.transport === "tcp" && m.file === "iperf2-tcp-header-variants.txt");
  const out: { command: string; bytes: Uint8Array; headerLength: number; ack: Uint8Array | undefined }[] = [];
  const byCmd = new Map<string, CapturedMessage[]>();
  for (const m of msgs) byCmd.set(m.command, [...(byCmd.get(m.command) ?? []), m]);
  for (const [command, ms] of byCmd) {
    const first = ms.find((m) => m.dstPort === 20501);
    if (!first || command.includes("--trip-times")) continue;
    const ack = ms.find((m) => m.srcPort === 20501 && m.length === 28);
    // Data after the header: ASCII digits like the stock payload tail.
    const tail = new TextEncoder().encode("0123456789".repeat(5));
    const bytes = new Uint8Array(first.bytes.length + tail.length);
    bytes.set(first.bytes);
    bytes.set(tail, first.bytes.length);
    out.push({ command, bytes, headerLength: first.complete ? first.length : 0, ack: ack?.bytes });
  }
  return out;
}

describe("TCP server session on the captured client openings, split at every offset", () => {
  const conns = connections();

  test("there are openings with and without a header", () => {
    expect(conns.some((c) => c.headerLength === 60)).toBe(true);
    expect(conns.some((c) => c.command.endsWith(" -C") && c.headerLength === 0)).toBe(true);
  });

  test("one decision per connection, the ack exactly when the stock server sent one, every byte counted", () => {
    for (const c of conns) {
      for (const [a, b] of splits(c.bytes)) {
        const r = run();
        r.session.onData(a);
        r.session.onData(b);
        expect(r.tests.length).toBe(1);
        const t = r.tests[0]!;
        expect(t.acked).toBe(c.ack !== undefined);
        expect(r.stream.written).toEqual(c.ack ?? new Uint8Array(0));
        if (c.ack) expect(r.stream.written).toEqual(encodeServerAck());
        expect(t.header === null).toBe(c.headerLength === 0);
        // What was read before the decision is header + pending; the rest is counted as it arrives.
        expect(t.received - t.pending.length).toBe(c.headerLength);
        r.session.onEof();
        expect(r.ends).toEqual([c.bytes.length]);
        expect(r.stream.closed).toBe(true);
      }
    }
  });

  test("what each opening asks the server to do", () => {
    const decision = (suffix: string) => {
      const c = conns.find((x) => x.command.endsWith(suffix))!;
      const r = run();
      r.session.onData(c.bytes);
      return r.tests[0]!;
    };
    const plain = decision("-t 1 -b 10M");
    expect(plain.sendHere).toBeNull();
    expect(plain.connectBack).toBeNull();
    const rev = decision("-b 10M -R");
    expect(rev.sendHere).toEqual({ amount: { kind: "time", seconds: 1 }, rate: 10485760, rateUnits: "bps", writeSize: 131072 });
    expect(rev.acked).toBe(false);
    expect(decision("--full-duplex").sendHere?.rate).toBe(10485760);
    expect(decision("-d -L 20502").connectBack).toMatchObject({ port: 20502, when: "now" });
    expect(decision("-r -L 20502").connectBack).toMatchObject({ port: 20502, when: "after-eof" });
    expect(decision("-n 100K -l 10K").request?.amount).toEqual({ kind: "bytes", bytes: 102400 });
  });

  test("after handOff the session neither counts nor closes", () => {
    const r = run();
    r.session.onData(conns[0]!.bytes);
    r.session.handOff();
    r.session.onData(new Uint8Array(100));
    r.session.onEof();
    expect(r.ends).toEqual([]);
    expect(r.stream.closed).toBe(false);
  });

  test("EOF before a header completes: a short headerless transfer, closed at once", () => {
    const r = run();
    r.session.onData(conns[0]!.bytes.subarray(0, 30));
    r.session.onEof();
    expect(r.tests[0]!.header).toBeNull();
    expect(r.ends).toEqual([30]);
  });

  test("EOF before any byte (--connect-only): no test, closed at once", () => {
    const r = run();
    r.session.onData(new Uint8Array(0));
    r.session.onEof();
    expect(r.tests).toEqual([]);
    expect(r.ends).toEqual([0]);
    expect(r.stream.closed).toBe(true);
  });

  test("a silent peer is dropped by expire()", () => {
    const r = run();
    r.session.onData(new Uint8Array([0x40, 0x01]));
    r.session.expire();
    expect(r.stream.closed).toBe(true);
    expect(r.errors[0]?.code).toBe("short");
  });

  test("a bad header closes the connection with a typed error", () => {
    const r = run();
    r.session.onData(new Uint8Array([0x40, 0x01, 0x00, 0x10, 1, 2, 3, 4]));
    expect(r.errors[0]?.code).toBe("bad-length");
    expect(r.stream.closed).toBe(true);
    r.session.onData(new Uint8Array(10)); // ignored, no throw
  });

  test("random openings in random chunks never throw and end in exactly one outcome", () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ minLength: 0, maxLength: 80 }), { maxLength: 6 }), fc.boolean(), (chunks, eof) => {
        const r = run();
        for (const c of chunks) r.session.onData(c);
        if (eof) r.session.onEof();
        else r.session.expire();
        // An EOF before any byte ends the connection with no test (end(0)).
        const silentEnd = r.tests.length === 0 && r.ends.length === 1 && r.ends[0] === 0 ? 1 : 0;
        expect(r.tests.length + r.errors.length + silentEnd).toBeGreaterThanOrEqual(eof ? 1 : 0);
        expect(r.tests.length).toBeLessThanOrEqual(1);
        if (eof && r.errors.length === 0) expect(r.stream.closed).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });
});
