/**
 * iperf3 control protocol under fuzzing: both push decoders (client->server, server->client), the params and results
 * JSON decoders, cookie and UDP header decoders, and both session state machines driven by mutated captures.
 * Every input must end in a valid message or an Iperf3ProtocolError; sessions must never throw, never write after
 * closing, never turn a bug into an "internal error", and always end once the peer is gone and time has passed.
 */
import fc from "fast-check";
import { decodeCookie, encodeCookie } from "../../interop/iperf3/cookie.ts";
import { Limits } from "../../interop/iperf3/constants.ts";
import { ClientStreamDecoder, Iperf3ProtocolError, ServerStreamDecoder, type ClientMessage, type ServerMessage } from "../../interop/iperf3/framing.ts";
import { ClientSession, type ClientEvent } from "../../interop/iperf3/client-session.ts";
import { decodeParams, TestParams } from "../../interop/iperf3/params.ts";
import { decodeResults, encodeResults, type Results } from "../../interop/iperf3/results.ts";
import { ServerSession, type ServerEvent } from "../../interop/iperf3/server-session.ts";
import { decodeUdpHeader, encodeUdpHeader, isHelloReply, replyToHello, udpHeaderSize } from "../../interop/iperf3/udp.ts";
import { CONTROL_CAPTURES, loadControlCapture } from "../fixtures/iperf3/capture.ts";
import {
  bounded,
  check,
  chunk,
  cutsArb,
  editedJson,
  fixedSize,
  fuzzBytes,
  quiet,
  RUN_LIMIT_MS,
  syncTarget,
  typed,
  utf8,
  type Cuts,
  type FuzzTarget,
} from "./harness.ts";
import { concatBytes } from "../../lib/bytes.ts";

const captures = CONTROL_CAPTURES.map(loadControlCapture);
const clientStreams = captures.map((c) => c.client).filter((b) => b.length > 0);
const serverStreams = captures.map((c) => c.server).filter((b) => b.length > 0);

const decodeText = (b: Uint8Array) => new TextDecoder().decode(b);
const clientMessages = clientStreams.flatMap((s) => new ClientStreamDecoder().push(s));
const serverMessages = serverStreams.flatMap((s) => new ServerStreamDecoder().push(s));
const paramsDocs = clientMessages.flatMap((m) => (m.kind === "params" ? [JSON.parse(decodeText(m.json)) as Record<string, unknown>] : []));
const resultsDocs = [...clientMessages, ...serverMessages].flatMap((m) => (m.kind === "results" ? [JSON.parse(decodeText(m.json)) as Record<string, unknown>] : []));
const cookies = clientMessages.flatMap((m) => (m.kind === "cookie" ? [m.bytes] : []));
const capturedParams = clientMessages.flatMap((m) => (m.kind === "params" ? [decodeParams(m.json)] : []));

const PARAM_KEYS = Object.keys(TestParams.shape).concat(["tcp", "udp", "sctp", "omit", "time", "num", "blockcount", "MSS", "nodelay", "parallel", "reverse", "bidirectional", "window", "len", "bandwidth", "fqrate", "pacing_timer", "burst", "TOS", "flowlabel", "title", "extra_data", "congestion", "get_server_output", "udp_counters_64bit", "repeating_payload", "zerocopy", "dont_fragment", "authtoken", "client_version"]);
const RESULT_KEYS = ["cpu_util_total", "cpu_util_user", "cpu_util_system", "sender_has_retransmits", "congestion_used", "server_output_text", "server_output_json", "streams", "id", "bytes", "retransmits", "jitter", "errors", "packets", "start_time", "end_time"];

/** Small limits so a frame length within them is reached by the mutations, as well as the real 8 KiB / 4 MiB. */
const SMALL = { params: 600, results: 2000 };

function checkClientMessage(m: ClientMessage, limits: { params: number; results: number }): void {
  switch (m.kind) {
    case "cookie":
      return check(m.bytes.length === 37, `cookie of ${m.bytes.length} bytes`);
    case "params":
      return check(m.json.length <= limits.params, `params frame of ${m.json.length} bytes passed the ${limits.params} limit`);
    case "results":
      return check(m.json.length <= limits.results, `results frame of ${m.json.length} bytes passed the ${limits.results} limit`);
    case "state":
      return check(Number.isInteger(m.state) && m.state >= -128 && m.state <= 127, `state ${m.state} is not a signed byte`);
  }
}

function checkServerMessage(m: ServerMessage, maxResults: number): void {
  switch (m.kind) {
    case "results":
      return check(m.json.length <= maxResults, `results frame of ${m.json.length} bytes passed the ${maxResults} limit`);
    case "state":
      return check(Number.isInteger(m.state) && m.state >= -128 && m.state <= 127, `state ${m.state} is not a signed byte`);
    case "server-error":
      return check(Number.isInteger(m.iErrno) && (m.errno === undefined || Number.isInteger(m.errno)), "server-error payload is not two int32");
  }
}

interface PushDecoder<M> {
  push(chunk: Uint8Array): M[];
  readonly buffered: number;
}

interface Fed<M> {
  messages: M[];
  error?: string;
}

/**
 * Feeds the chunks (time and memory bounded as one call); checks typed errors, the dead state after one, and that
 * buffering stays within one message.
 */
function feed<M>(what: string, d: PushDecoder<M>, chunks: Uint8Array[], maxBuffered: number): Fed<M> {
  return bounded(what, () => {
    const messages: M[] = [];
    for (const c of chunks) {
      const r = typed(`${what}.push`, () => d.push(c), Iperf3ProtocolError);
      if (!r.ok) {
        const again = typed(`${what}.push after an error`, () => d.push(Uint8Array.of(1)), Iperf3ProtocolError);
        check(!again.ok, `${what} accepted bytes after it failed`);
        return { messages, error: r.error.message };
      }
      messages.push(...r.value);
      check(d.buffered <= maxBuffered, `${what} holds ${d.buffered} bytes, more than one message (${maxBuffered})`);
    }
    return { messages };
  }, RUN_LIMIT_MS);
}

/**
 * Chunking must not change what is decoded. Byte-at-a-time is the reference: it yields every message before an
 * error, while a chunk holding both good and bad bytes throws and drops the messages completed in that call.
 */
function sameAsBytewise<M>(what: string, make: () => PushDecoder<M>, bytes: Uint8Array, cuts: Cuts, maxBuffered: number): Fed<M> {
  const ref = feed(what, make(), chunk(bytes, "bytewise"), maxBuffered);
  const got = feed(what, make(), chunk(bytes, cuts), maxBuffered);
  check(got.error === ref.error, () => `${what}: chunked error ${JSON.stringify(got.error)} but byte-wise ${JSON.stringify(ref.error)}`);
  if (ref.error === undefined) check(Bun.deepEquals(got.messages, ref.messages), `${what}: chunking changed the messages`);
  else check(Bun.deepEquals(got.messages, ref.messages.slice(0, got.messages.length)), `${what}: chunked messages are not a prefix of the byte-wise ones`);
  return ref;
}

const streamInput = (seeds: Uint8Array[]) =>
  fc.tuple(fc.array(fuzzBytes(seeds, { maxRandom: 256 }), { minLength: 1, maxLength: 2 }).map(concatBytes), cutsArb, fc.boolean());

function checkParams(p: TestParams): void {
  check(TestParams.safeParse(p).success, "decodeParams returned parameters its own schema rejects");
  check(!(p.reverse && p.bidirectional), "reverse and bidirectional together were accepted");
  if (p.protocol === "udp") check(p.len >= Limits.minUdpBlockSize && p.len <= Limits.maxUdpBlockSize, `UDP len ${p.len} accepted`);
}

function checkResults(r: Results): void {
  check(r.streams.length <= 2 * Limits.maxStreams, `${r.streams.length} streams accepted`);
  const ids = new Set(r.streams.map((s) => s.id));
  check(ids.size === r.streams.length, "duplicate stream ids accepted");
  for (const s of r.streams) {
    check(Number.isSafeInteger(s.id) && s.id >= 1 && s.id <= 1 << 30, `stream id ${s.id} accepted`);
    check(Number.isSafeInteger(s.bytes) && s.bytes >= 0, `stream bytes ${s.bytes} accepted`);
    for (const v of [s.retransmits, s.errors, s.packets]) check(Number.isSafeInteger(v), `count ${v} is not an integer`);
  }
  // What we accept we can write back, and writing it back is stable after one normalising pass.
  const r2 = typed("decodeResults(encodeResults(r))", () => decodeResults(utf8(encodeResults(r))), Iperf3ProtocolError);
  check(r2.ok, () => `our own encoding of accepted results is rejected: ${r2.ok ? "" : r2.error.message}`);
  const r3 = decodeResults(utf8(encodeResults(r2.value)));
  check(Bun.deepEquals(r2.value, r3), "encode/decode of results is not stable");
}

// ---------------------------------------------------------------------------------------------------------------
// Sessions.

const TICKS = [0, 1, 500, 1_000, 10_000, 40_000, 130_000] as const;

interface SessionPlan {
  bytes: Uint8Array;
  cuts: Cuts;
  /** Milliseconds to advance after each chunk (cycled), then tick. */
  ticks: number[];
  /** Glue behaviour: the listener fails; only part of the streams connect; small frame limits. */
  listenerFails: boolean;
  streamsShort: boolean;
  smallLimits: boolean;
  eofAtEnd: boolean;
}

const sessionPlan = (seeds: Uint8Array[]): fc.Arbitrary<SessionPlan> =>
  fc.record({
    bytes: fc.array(fuzzBytes(seeds, { maxRandom: 128 }), { minLength: 1, maxLength: 2 }).map(concatBytes),
    cuts: cutsArb,
    ticks: fc.array(fc.constantFrom(...TICKS), { minLength: 1, maxLength: 6 }),
    listenerFails: fc.boolean(),
    streamsShort: fc.boolean(),
    smallLimits: fc.boolean(),
    eofAtEnd: fc.boolean(),
  });

/** Transport that records writes and rejects any use after close. */
class Wire {
  writes: Uint8Array[] = [];
  closes = 0;
  write(b: Uint8Array): void {
    check(this.closes === 0, "session wrote after closing the connection");
    this.writes.push(b.slice());
  }
  close(): void {
    this.closes++;
  }
  get bytes(): Uint8Array {
    return concatBytes(this.writes);
  }
}

function localResults(ids: number[]): Results {
  return {
    cpuUtilTotal: 1.5,
    cpuUtilUser: 1,
    cpuUtilSystem: 0.5,
    senderHasRetransmits: -1,
    streams: ids.map((id) => ({ id, bytes: 1000, retransmits: -1, jitterS: 0, errors: 0, packets: 0, startTimeS: 0, endTimeS: 1 })),
  };
}

function checkEvents<E extends { type: string }>(events: E[], terminal: readonly string[]): void {
  const at = events.findIndex((e) => terminal.includes(e.type));
  check(at < 0 || at === events.length - 1, () => `events after the end: ${events.map((e) => e.type).join(",")}`);
}

function runServerSession(p: SessionPlan): void {
  const wire = new Wire();
  const events: ServerEvent[] = [];
  const limits = p.smallLimits ? SMALL : undefined;
  const s = new ServerSession(wire, (e) => events.push(e), { nowMs: 0, ...(limits ? { limits } : {}) });
  let now = 0;
  // The glue: answers what the session waits for, as a fast data plane would.
  const glue = () => {
    if (s.phase === "preparing") {
      if (p.listenerFails) quiet("listenerFailed", () => s.listenerFailed(202, 98, "UDP port busy"));
      else quiet("listenerReady", () => s.listenerReady(now));
    }
    if (s.phase === "creating-streams") {
      const want = p.streamsShort ? 1 : 1 << 20;
      for (let i = 0; i < want && s.phase === "creating-streams"; i++) if (!quiet("acceptStream", () => s.acceptStream(now))) break;
    }
    if (s.phase === "starting") quiet("begin", () => s.begin(now));
    if (s.phase === "stopping") quiet("stopped", () => s.stopped(localResults(s.streams.map((x) => x.id)), now));
  };
  const chunks = chunk(p.bytes, p.cuts);
  chunks.forEach((c, i) => {
    quiet("ServerSession.receive", () => s.receive(c, now));
    glue();
    now += p.ticks[i % p.ticks.length]!;
    quiet("ServerSession.tick", () => s.tick(now, now));
    glue();
  });
  if (p.eofAtEnd) quiet("ServerSession.eof", () => s.eof(now));
  glue();
  // A gone or silent client never holds the server: after EOF and a day, the session is closed.
  quiet("ServerSession.eof", () => s.eof(now));
  glue();
  quiet("ServerSession.tick", () => s.tick(now + 86_400_000, now));
  glue();
  check(s.phase === "closed", `server session still ${s.phase} after EOF and a day`);
  check(wire.closes === 1, `transport closed ${wire.closes} times`);
  checkEvents(events, ["done", "aborted"]);
  const end = events[events.length - 1];
  check(end?.type === "done" || end?.type === "aborted", "closed without a done/aborted event");
  if (end?.type === "aborted") check(!end.failure.detail.startsWith("internal error"), () => `untyped exception inside the session: ${end.failure.detail}`);
  // What we wrote must be a valid server stream.
  const back = typed("ServerStreamDecoder on our own bytes", () => new ServerStreamDecoder().push(wire.bytes), Iperf3ProtocolError);
  check(back.ok, () => `our server wrote bytes our client cannot decode: ${back.ok ? "" : back.error.message}`);
}

function runClientSession(p: SessionPlan, params: TestParams): void {
  const wire = new Wire();
  const events: ClientEvent[] = [];
  const s = new ClientSession(wire, (e) => events.push(e), {
    cookie: "abcdefghijklmnopqrstuvwxyz234567abcd",
    params,
    nowMs: 0,
    ...(p.smallLimits ? { maxResultsBytes: SMALL.results } : {}),
  });
  let now = 0;
  const glue = () => {
    if (s.phase === "results") quiet("sendResults", () => s.sendResults(localResults([1]), now));
    if (s.phase === "running" && p.streamsShort) quiet("endTest", () => s.endTest(now));
  };
  quiet("ClientSession.start", () => s.start(now));
  chunk(p.bytes, p.cuts).forEach((c, i) => {
    quiet("ClientSession.receive", () => s.receive(c, now));
    glue();
    now += p.ticks[i % p.ticks.length]!;
    quiet("ClientSession.tick", () => s.tick(now));
    glue();
  });
  if (!p.eofAtEnd) quiet("ClientSession.endTest", () => s.endTest(now));
  glue();
  quiet("ClientSession.eof", () => s.eof(now));
  glue();
  quiet("ClientSession.tick", () => s.tick(now + 86_400_000));
  check(s.phase === "closed", `client session still ${s.phase} after EOF and a day`);
  check(wire.closes === 1, `transport closed ${wire.closes} times`);
  checkEvents(events, ["done", "failed"]);
  const end = events[events.length - 1];
  check(end?.type === "done" || end?.type === "failed", "closed without a done/failed event");
  if (end?.type === "failed") check(!end.failure.detail.startsWith("internal error"), () => `untyped exception inside the session: ${end.failure.detail}`);
  const back = typed("ClientStreamDecoder on our own bytes", () => new ClientStreamDecoder().push(wire.bytes), Iperf3ProtocolError);
  check(back.ok, () => `our client wrote bytes a server cannot decode: ${back.ok ? "" : back.error.message}`);
}

export const targets: Record<string, FuzzTarget> = {
  "iperf3 ClientStreamDecoder: messages or Iperf3ProtocolError, whatever the chunking": syncTarget(streamInput(clientStreams), ([bytes, cuts, small]) => {
    const limits = small ? SMALL : { params: Limits.maxParamsBytes, results: Limits.maxResultsBytes };
    const r = sameAsBytewise("ClientStreamDecoder", () => new ClientStreamDecoder(limits), bytes, cuts, 4 + Math.max(37, limits.params, limits.results));
    for (const m of r.messages) checkClientMessage(m, limits);
  }),

  "iperf3 ServerStreamDecoder: messages or Iperf3ProtocolError, whatever the chunking; end() at EOF": syncTarget(streamInput(serverStreams), ([bytes, cuts, small]) => {
    const max = small ? SMALL.results : Limits.maxResultsBytes;
    const r = sameAsBytewise("ServerStreamDecoder", () => new ServerStreamDecoder(max), bytes, cuts, 4 + max);
    for (const m of r.messages) checkServerMessage(m, max);
    if (r.error === undefined) {
      const d = new ServerStreamDecoder(max);
      d.push(bytes);
      const last = typed("ServerStreamDecoder.end", () => d.end(), Iperf3ProtocolError);
      check(last.ok, "end() threw");
      if (last.value) checkServerMessage(last.value, max);
    }
  }),

  "iperf3 decodeParams: TestParams within limits or Iperf3ProtocolError": syncTarget(
    fc.oneof(
      { weight: 3, arbitrary: editedJson(paramsDocs, PARAM_KEYS).map(utf8) },
      { weight: 2, arbitrary: fuzzBytes(paramsDocs.map((d) => utf8(JSON.stringify(d)))) },
    ),
    (json) => {
      const r = typed("decodeParams", () => decodeParams(json), Iperf3ProtocolError);
      if (r.ok) checkParams(r.value);
    },
  ),

  "iperf3 decodeResults: Results with unique bounded streams or Iperf3ProtocolError; re-encoding is stable": syncTarget(
    fc.oneof(
      { weight: 3, arbitrary: editedJson(resultsDocs, RESULT_KEYS).map(utf8) },
      { weight: 2, arbitrary: fuzzBytes(resultsDocs.map((d) => utf8(JSON.stringify(d)))) },
    ),
    (json) => {
      const r = typed("decodeResults", () => decodeResults(json), Iperf3ProtocolError);
      if (r.ok) checkResults(r.value);
    },
  ),

  "iperf3 cookie and UDP header decoders are total and round-trip": syncTarget(
    fc.tuple(fixedSize(cookies, 37), fuzzBytes([...cookies, Uint8Array.of(0x39, 0x38, 0x37, 0x36)], { maxRandom: 40 }), fc.boolean()),
    ([cookie, datagram, counters64]) => {
      const c = typed("decodeCookie", () => decodeCookie(cookie));
      check(c.ok, "decodeCookie threw");
      if (c.value.ok) check(Bun.deepEquals(encodeCookie(c.value.cookie), cookie), "accepted cookie does not re-encode to its bytes");
      const h = typed("decodeUdpHeader", () => decodeUdpHeader(datagram, counters64));
      check(h.ok, "decodeUdpHeader threw");
      check((h.value === undefined) === datagram.length < udpHeaderSize(counters64), "decodeUdpHeader: short iff undefined");
      if (h.value && h.value.seq <= Number.MAX_SAFE_INTEGER) {
        const out = new Uint8Array(udpHeaderSize(counters64));
        encodeUdpHeader(out, h.value, counters64);
        check(Bun.deepEquals(out, datagram.slice(0, out.length)), "UDP header does not re-encode to its bytes");
      }
      check(typed("replyToHello", () => replyToHello(datagram)).ok && typed("isHelloReply", () => isHelloReply(datagram)).ok, "hello check threw");
    },
  ),

  "iperf3 ServerSession: never throws, always ends, writes a valid stream": syncTarget(sessionPlan(clientStreams), (plan) => bounded("ServerSession", () => runServerSession(plan), RUN_LIMIT_MS)),

  "iperf3 ClientSession: never throws, always ends, writes a valid stream": syncTarget(
    fc.tuple(sessionPlan(serverStreams), fc.constantFrom(...capturedParams)),
    ([plan, params]) => bounded("ClientSession", () => runClientSession(plan, params), RUN_LIMIT_MS),
  ),
};
