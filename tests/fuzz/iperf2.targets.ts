/**
 * iperf 2 under fuzzing: the client header (TCP stream start and UDP offset 16), the server ack, the UDP datagram
 * block and server report, and the four sessions, fed mutated captures from tests/fixtures/iperf2. Decoders end in
 * a valid message or an Iperf2WireError; sessions never throw, account every byte, and answer with valid bytes.
 */
import fc from "fast-check";
import { ClientHeader, clientHeaderLength, decodeClientHeader, encodeClientHeader, UDP_HEADER_OFFSET, type Transport } from "../../interop/iperf2/client-header.ts";
import { ClientRequest, describeClientHeader, type ClientRequestInput } from "../../interop/iperf2/client-request.ts";
import { IPERF2_DATAGRAM_HEADER, readIperf2 } from "../../interop/iperf2/datagram.ts";
import { HeaderFlag, hasFlag } from "../../interop/iperf2/flags.ts";
import { decodeServerAck, serverAckLength, ServerAck } from "../../interop/iperf2/server-ack.ts";
import { decodeServerReport, REPORT_LENGTH, ServerReport } from "../../interop/iperf2/server-report.ts";
import { TcpClientSession } from "../../interop/iperf2/tcp-client-session.ts";
import { TcpServerSession, type TcpServerTest } from "../../interop/iperf2/tcp-server-session.ts";
import type { Peer } from "../../interop/iperf2/transport.ts";
import { UdpClientSession } from "../../interop/iperf2/udp-client-session.ts";
import { UdpServerSession } from "../../interop/iperf2/udp-server-session.ts";
import { Iperf2WireError } from "../../interop/iperf2/wire-error.ts";
import { u32 } from "../../interop/iperf2/words.ts";
import { allMessages } from "../fixtures/iperf2/captures.ts";
import {
  bounded,
  check,
  chunk,
  classify,
  cutsArb,
  fuzzBytes,
  quiet,
  RUN_LIMIT_MS,
  syncTarget,
  typed,
  type Cuts,
  type FuzzTarget,
} from "./harness.ts";
import { concatBytes } from "../../lib/bytes.ts";
import { BouncebackServerSession } from "../../interop/iperf2/bounceback-server-session.ts";
import { readFileSync } from "node:fs";
import { join } from "node:path";

const messages = allMessages();
const isHeaderStart = (b: Uint8Array) => b.length >= 4 && (hasFlag(u32(b, 0), HeaderFlag.version1) || hasFlag(u32(b, 0), HeaderFlag.extend));
const tcp = messages.filter((m) => m.transport === "tcp");
const tcpHeaders = tcp.filter((m) => isHeaderStart(m.bytes)).map((m) => m.bytes);
const acks = tcp.filter((m) => m.bytes.length >= 4 && u32(m.bytes, 0) === 2).map((m) => m.bytes);
const digits = tcp.filter((m) => m.bytes[0]! >= 0x30 && m.bytes[0]! <= 0x39).map((m) => m.bytes);
const udp = messages.filter((m) => m.transport === "udp");
const reports = udp.filter((m) => m.length === REPORT_LENGTH && m.complete).map((m) => m.bytes);
const datagrams = udp.filter((m) => m.length !== REPORT_LENGTH).map((m) => m.bytes);
const udpHeaders = datagrams.map((d) => d.subarray(UDP_HEADER_OFFSET));

function checkHeader(h: ClientHeader, bytes: Uint8Array, transport: Transport): void {
  const parsed = ClientHeader.safeParse(h);
  check(parsed.success, () => `decodeClientHeader returned a header its own schema rejects: ${parsed.error?.issues[0]?.path.join(".")} ${parsed.error?.issues[0]?.message}`);
  const length = clientHeaderLength(h.flags, transport);
  check(length !== null && length <= bytes.length, "decoded header length disagrees with the flags");
  // Re-encoding writes the same bytes, but for the reserved half-word at 44 that the decoder does not keep.
  const again = typed("encodeClientHeader(decoded)", () => encodeClientHeader(h, transport), Iperf2WireError);
  check(again.ok, () => `our encoder rejects a header our decoder accepted: ${again.ok ? "" : again.error.message}`);
  const want = bytes.slice(0, length);
  if (h.ext) want.fill(0, 44, 46);
  check(Bun.deepEquals(again.value, want), "decoded header does not re-encode to its bytes");
  const req = typed("describeClientHeader", () => describeClientHeader(h, transport));
  check(req.ok, "describeClientHeader threw");
  const r = ClientRequest.safeParse(req.value);
  check(r.success, () => `describeClientHeader gave a request its own schema rejects: ${r.error?.issues[0]?.path.join(".")} ${r.error?.issues[0]?.message}`);
}

function checkReport(r: ServerReport): void {
  const p = ServerReport.safeParse(r);
  check(p.success, () => `decodeServerReport returned a report its own schema rejects: ${p.error?.issues[0]?.path.join(".")} ${p.error?.issues[0]?.message}`);
}

const SERVER_VERSION = { high: 0x00020001, low: 0x00080003 };

/** Stand-in transport: records writes, refuses them after close or half-close. */
class Stream {
  writes: Uint8Array[] = [];
  ended = 0;
  closes = 0;
  write(b: Uint8Array): void {
    check(this.closes === 0 && this.ended === 0, "session wrote after end/close");
    this.writes.push(b.slice());
  }
  end(): void {
    this.ended++;
  }
  close(): void {
    this.closes++;
  }
}

interface ServerRun {
  tests: TcpServerTest[];
  errors: Iperf2WireError[];
  ends: number[];
  stream: Stream;
  session: TcpServerSession;
}

function runTcpServer(chunks: Uint8Array[], eof: boolean): ServerRun {
  const run: ServerRun = { tests: [], errors: [], ends: [], stream: new Stream(), session: undefined as never };
  run.session = new TcpServerSession(run.stream, { test: (t) => run.tests.push(t), end: (n) => run.ends.push(n), error: (e) => run.errors.push(e) }, SERVER_VERSION);
  for (const c of chunks) quiet("TcpServerSession.onData", () => run.session.onData(c));
  if (eof) quiet("TcpServerSession.onEof", () => run.session.onEof());
  else quiet("TcpServerSession.expire", () => run.session.expire());
  return run;
}

function checkTcpServer(bytes: Uint8Array, cuts: Cuts, eof: boolean): void {
  const whole = runTcpServer([bytes], eof);
  const got = runTcpServer(chunk(bytes, cuts), eof);
  for (const r of [whole, got]) {
    check(r.tests.length + r.errors.length <= 1, "more than one verdict on one connection");
    // Once the header is decided the connection is the data plane's; before that the session closes it itself.
    const decided = r.tests.length === 1 && !eof;
    check(r.stream.closes === (decided ? 0 : 1), `connection closed ${r.stream.closes} times`);
    check(r.ends.length <= 1 && (r.ends.length === 0 || r.errors.length === 0), "end after an error");
    const t = r.tests[0];
    if (t) {
      if (t.header) checkHeader(t.header, bytes, "tcp");
      check(r.stream.writes.length === (t.acked ? 1 : 0), "ack written without acked, or twice");
      if (r.ends[0] !== undefined) check(r.ends[0] === bytes.length, `end reports ${r.ends[0]} bytes of ${bytes.length}`);
    }
  }
  // Chunking changes where payload starts being counted, never what the client asked for.
  const a = whole.tests[0];
  const b = got.tests[0];
  check(Bun.deepEquals(a?.header, b?.header) && Bun.deepEquals(a?.request, b?.request), "chunking changed the decoded header");
  check(whole.errors.length === got.errors.length, "chunking changed whether the header is an error");
}

interface Datagram {
  bytes: Uint8Array;
  peer: number;
  /** Sequence word overrides: [low, high] as on the wire, applied to a copy. */
  seq?: [number, number];
}

const SEQ_WORDS: Array<[number, number]> = [
  [1, 0], [2, 0], [0xffffffff, 0xffffffff], [0xfffffffe, 0xffffffff], [0, 0], [0x7fffffff, 0], [0x80000000, 0],
  [0, 0x7fffffff], [0, 0x80000000], [0, 0x00200000], [5, 0x00200000], [0xffffff00, 0xffffffff], [0, 1],
];

const datagramArb: fc.Arbitrary<Datagram> = fc.record({
  bytes: fuzzBytes(datagrams, { maxRandom: 140, maxMutations: 4 }),
  peer: fc.nat({ max: 2 }),
  seq: fc.option(
    fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...SEQ_WORDS) }, fc.tuple(fc.nat({ max: 0xffffffff }), fc.nat({ max: 0xffffffff }))),
    { nil: undefined },
  ),
});

function withSeq(d: Datagram): Uint8Array {
  if (!d.seq || d.bytes.length < IPERF2_DATAGRAM_HEADER) return d.bytes;
  const out = d.bytes.slice();
  const dv = new DataView(out.buffer);
  dv.setUint32(0, d.seq[0] >>> 0);
  dv.setUint32(12, d.seq[1] >>> 0);
  return out;
}

const PEERS: Peer[] = [
  { host: "127.0.0.1", port: 40000 },
  { host: "127.0.0.1", port: 40001 },
  { host: "::1", port: 40000 },
];

const REQUESTS: ClientRequestInput[] = [
  { transport: "tcp", amount: { kind: "time", seconds: 10 } },
  { transport: "tcp", amount: { kind: "bytes", bytes: 1 << 20 }, direction: "reverse" },
  { transport: "tcp", amount: { kind: "time", seconds: 2 }, direction: "full-duplex", connectBack: "dual" },
  { transport: "tcp", amount: { kind: "time", seconds: 2 }, extended: false, connectBack: "tradeoff" },
  { transport: "udp", amount: { kind: "time", seconds: 1 }, rate: 1 << 20 },
  { transport: "udp", amount: { kind: "time", seconds: 1 }, direction: "reverse" },
];

/** The captured bounceback requests (tests/fixtures/iperf2/iperf2-bounceback.txt, client to server). */
const bbRequests = readFileSync(join(import.meta.dir, "../fixtures/iperf2/iperf2-bounceback.txt"), "utf8")
  .split("\n")
  .filter((l) => l.split(" ")[1] === "C>S")
  .map((l) => Uint8Array.from(Buffer.from(l.split(" ")[2]!, "hex")));

interface BbRun {
  stream: Stream;
  ends: number[][];
  errors: Iperf2WireError[];
}

function runBounceback(chunks: Uint8Array[], eof: boolean): BbRun {
  const run: BbRun = { stream: new Stream(), ends: [], errors: [] };
  let t = 0;
  // The hold runs at once and the clock ticks per reading: chunking is then the only thing that differs between runs.
  const s = new BouncebackServerSession(run.stream, { now: () => ({ sec: 1, usec: t++ }), after: (_us, fn) => fn() }, {
    started: () => {},
    replied: () => {},
    end: (...n) => run.ends.push(n),
    error: (e) => run.errors.push(e),
  });
  for (const c of chunks) quiet("BouncebackServerSession.onData", () => s.onData(c));
  if (eof) quiet("BouncebackServerSession.onEof", () => s.onEof());
  return run;
}

function checkBounceback(bytes: Uint8Array, cuts: Cuts, eof: boolean): void {
  const whole = runBounceback([bytes], eof);
  const got = runBounceback(chunk(bytes, cuts), eof);
  for (const r of [whole, got]) {
    check(r.stream.closes <= 1, `closed ${r.stream.closes} times`);
    check(r.ends.length + r.errors.length <= 1, "more than one ending");
    check(r.stream.closes === r.ends.length + r.errors.length, "an ending without a close, or a close without one");
    const sizes = new Set(r.stream.writes.map((w) => w.length));
    check(sizes.size <= 1, "replies of different sizes on one connection");
    if (r.ends[0]) check(r.ends[0][0]! <= bytes.length && r.ends[0][1] === r.stream.writes.reduce((n, w) => n + w.length, 0), "end counts differ from the bytes");
  }
  check(whole.stream.writes.length === got.stream.writes.length && whole.errors.length === got.errors.length, "chunking changed the replies");
  check(JSON.stringify(whole.ends) === JSON.stringify(got.ends), "chunking changed the counts");
}

export const targets: Record<string, FuzzTarget> = {
  "iperf2 BouncebackServerSession: one ending, closes once, equal replies, chunking-independent": syncTarget(
    fc.tuple(fc.array(fuzzBytes(bbRequests, { maxRandom: 300 }), { minLength: 1, maxLength: 3 }).map(concatBytes), cutsArb, fc.boolean()),
    ([bytes, cuts, eof]) => bounded("BouncebackServerSession", () => checkBounceback(bytes, cuts, eof), RUN_LIMIT_MS),
  ),

  "iperf2 decodeClientHeader (TCP and UDP): a header that re-encodes, or Iperf2WireError": syncTarget(
    fc.oneof(
      fc.tuple(fuzzBytes(tcpHeaders, { maxRandom: 300 }), fc.constant("tcp" as const)),
      fc.tuple(fuzzBytes(udpHeaders, { maxRandom: 300 }), fc.constant("udp" as const)),
    ),
    ([bytes, transport]) => {
      const r = typed("decodeClientHeader", () => decodeClientHeader(bytes, transport), Iperf2WireError);
      if (r.ok) checkHeader(r.value, bytes, transport);
    },
  ),

  "iperf2 server ack, datagram block and server report: valid or Iperf2WireError": syncTarget(
    fc.tuple(fuzzBytes(acks, { maxRandom: 300 }), fuzzBytes(reports, { maxRandom: 200 }), fc.boolean()),
    ([ackBytes, reportBytes, seq64]) => {
      const len = typed("serverAckLength", () => serverAckLength(ackBytes), Iperf2WireError);
      const ack = typed("decodeServerAck", () => decodeServerAck(ackBytes), Iperf2WireError);
      if (ack.ok) {
        check(ServerAck.safeParse(ack.value).success, "decodeServerAck returned an ack its own schema rejects");
        check(len.ok && len.value !== null && len.value === 28 + ack.value.tail.length, "ack length and tail disagree");
      }
      const stamp = typed("readIperf2", () => readIperf2(reportBytes, seq64), Iperf2WireError);
      check(stamp.ok === reportBytes.length >= IPERF2_DATAGRAM_HEADER, "readIperf2 fails iff the datagram is short");
      if (stamp.ok) check(Number.isInteger(stamp.value.seq), "sequence number is not an integer");
      const rep = typed("decodeServerReport", () => decodeServerReport(reportBytes), Iperf2WireError);
      if (rep.ok) checkReport(rep.value);
    },
  ),

  "iperf2 TcpServerSession: one verdict, every byte counted, closes once, chunking-independent": syncTarget(
    fc.tuple(
      fc.tuple(fuzzBytes(tcpHeaders, { maxRandom: 300 }), fc.option(fuzzBytes(digits, { maxRandom: 64 }), { nil: undefined })).map(([h, p]) => (p ? concatBytes([h, p]) : h)),
      cutsArb,
      fc.boolean(),
    ),
    ([bytes, cuts, eof]) => bounded("TcpServerSession", () => checkTcpServer(bytes, cuts, eof), RUN_LIMIT_MS),
  ),

  "iperf2 TcpClientSession: ack recognised at most once, payload bytes conserved": syncTarget(
    fc.tuple(
      fc.constantFrom(...REQUESTS.filter((r) => r.transport === "tcp")),
      fc.array(fc.oneof(fuzzBytes(acks, { maxRandom: 64 }), fuzzBytes(digits, { maxRandom: 64 })), { minLength: 1, maxLength: 3 }).map(concatBytes),
      cutsArb,
    ),
    ([request, bytes, cuts]) =>
      bounded("TcpClientSession", () => {
        const stream = new Stream();
        let payload = 0;
        let ackBytes = 0;
        let ends = 0;
        const s = new TcpClientSession(stream, request, {
          ack: (a) => (ackBytes += 28 + a.tail.length),
          data: (d) => (payload += d.length),
          end: () => ends++,
        });
        quiet("TcpClientSession.start", () => s.start());
        for (const c of chunk(bytes, cuts)) quiet("TcpClientSession.onData", () => s.onData(c));
        quiet("TcpClientSession.finish", () => s.finish());
        quiet("TcpClientSession.onEof", () => s.onEof());
        check(ends === 1 && stream.closes === 1, "client did not end and close exactly once");
        check(ackBytes === 0 || ackBytes === 28 || (ackBytes > 28 && ackBytes <= 256), `ack of ${ackBytes} bytes`);
        check(payload + ackBytes === bytes.length, `${payload} payload + ${ackBytes} ack bytes of ${bytes.length} received`);
        check(s.received === payload, "received disagrees with the data events");
      }, RUN_LIMIT_MS),
  ),

  "iperf2 UdpServerSession: never throws; every reply is a report that decodes": syncTarget(
    fc.tuple(fc.array(datagramArb, { minLength: 1, maxLength: 12 }), fc.boolean(), fc.array(fc.double({ min: 0, max: 5, noNaN: true }), { minLength: 1, maxLength: 4 })),
    ([grams, enhanced, gaps]) =>
      bounded("UdpServerSession", () => {
        const sent: Uint8Array[] = [];
        const ended = new Set<number>();
        const s = new UdpServerSession({ send: (b) => sent.push(b.slice()) }, {
          flow: () => {},
          end: (f) => {
            check(!ended.has(f.id), "a flow ended twice");
            ended.add(f.id);
          },
        }, { enhanced, maxFlows: 2 });
        let now = 1_700_000_000;
        grams.forEach((g, i) => {
          now += gaps[i % gaps.length]!;
          const r = typed("UdpServerSession.onDatagram", () => s.onDatagram(withSeq(g), PEERS[g.peer]!, now), Iperf2WireError);
          if (!r.ok) throw r.error;
          check(s.activeFlows <= 2, "more flows than maxFlows");
        });
        quiet("UdpServerSession.expire", () => s.expire(now + 3600));
        check(s.activeFlows === 0, "idle flows were not forgotten");
        for (const b of sent) {
          check(b.length === REPORT_LENGTH, `reply of ${b.length} bytes`);
          const r = classify("decodeServerReport(our reply)", () => decodeServerReport(b), Iperf2WireError);
          check(r.ok && ServerReport.safeParse(r.value).success, "our report does not decode to a valid report");
        }
      }, RUN_LIMIT_MS),
  ),

  "iperf2 UdpClientSession: never throws; a report or data or FIN, then ignored": syncTarget(
    fc.tuple(fc.constantFrom(...REQUESTS.filter((r) => r.transport === "udp")), fc.array(datagramArb, { minLength: 1, maxLength: 8 }), fc.nat({ max: 7 })),
    ([request, grams, finAfter]) =>
      bounded("UdpClientSession", () => {
        const c = new UdpClientSession(request, 1470);
        let done = false;
        grams.forEach((g, i) => {
          if (i === finAfter) c.fin(100, 0, 1_700_000_000);
          const o = quiet("UdpClientSession.onDatagram", () => c.onDatagram(withSeq(g), 1_700_000_000 + i / 1000));
          if (done) check(o.kind === "ignored", "a datagram after the end was not ignored");
          if (o.kind === "report") {
            done = true;
            if (o.report) checkReport(o.report);
          }
          if (o.kind === "fin") done = true;
        });
      }, RUN_LIMIT_MS),
  ),
};
