/**
 * anyperf's own control protocol under fuzzing: the frame decoder and both session state machines, driven by
 * mutated whole conversations (and JSON bodies edited field by field) in any chunking. Every input ends in frames
 * or a NativeProtocolError, the same whatever the chunking; a session never throws, never writes after it closed,
 * only ever writes frames its peer's schema accepts, and ends once its deadline has passed.
 */
import fc from "fast-check";
import { FrameDecoder, NativeProtocolError, encodeFrame } from "../../src/native/protocol/framing.ts";
import { ClientMessage, PROTOCOL_VERSION, ServerMessage, type TestRequest } from "../../src/native/protocol/messages.ts";
import { ServerSession } from "../../src/native/protocol/server-session.ts";
import { ClientSession } from "../../src/native/protocol/client-session.ts";
import { DEADLINE_MS } from "../../src/native/protocol/transport.ts";
import { concatBytes } from "../../lib/bytes.ts";
import type { RemoteEnd } from "../../src/report/result.ts";
import { bounded, check, chunk, cutsArb, editedJson, fuzzBytes, syncTarget, utf8, type FuzzTarget } from "./harness.ts";

const REQ: TestRequest = {
  transport: "tcp", test: "stream", direction: "bidir", streams: 2, durationS: 5, bytes: 0, warmupS: 1, cooldownS: 0,
  bufferBytes: 131072, datagramBytes: 1400, bitsPerSecond: 0, packetsPerSecond: 0, requestBytes: 1, responseBytes: 1,
};
const fig = { bytes: 1000, seconds: 1, throughput_bps: 8000 };
const RESULTS: RemoteEnd = {
  version: "0.1.0", role: "server", phases: { warmup_s: 0, measured_s: 1, cooldown_s: 0 }, summary: fig, receiver: fig, totals: { received_bytes: 1000 },
  streams: [{ ...fig, id: 0, side: "recv", connections: 1 }], cpu: { busy_percent: 12.5 }, errors: [], tcp_buffers: { send_max: 4194304 },
};

const clientDocs: Record<string, unknown>[] = [
  { type: "hello", protocol: PROTOCOL_VERSION, tool: "anyperf", version: "0.1.0", token: "t0k" },
  { type: "test", test: REQ, clientPorts: [40001, 40002] },
  { type: "go" },
  { type: "window", edge: "start" },
  { type: "alive" },
  { type: "window", edge: "end" },
  { type: "finish" },
];
const serverDocs: Record<string, unknown>[] = [
  { type: "welcome", protocol: PROTOCOL_VERSION, version: "0.1.0" },
  { type: "ready", ports: [40003, 40004] },
  { type: "started" },
  { type: "results", results: RESULTS },
];
const clientStream = concatBytes(clientDocs.map(encodeFrame));
const serverStream = concatBytes(serverDocs.map(encodeFrame));

/** A conversation: whole, mutated as bytes, or one frame's JSON edited (a field dropped, retyped, added). */
function conversation(stream: Uint8Array, docs: Record<string, unknown>[], keys: string[]): fc.Arbitrary<Uint8Array> {
  const edited = fc.tuple(fc.nat({ max: docs.length - 1 }), editedJson(docs, keys)).map(([i, json]) => {
    const body = utf8(json);
    const frame = new Uint8Array(6 + body.length);
    frame.set([0x41, 0x50]);
    new DataView(frame.buffer).setUint32(2, body.length, false);
    frame.set(body, 6);
    return concatBytes([...docs.slice(0, i).map(encodeFrame), frame, ...docs.slice(i + 1).map(encodeFrame)]);
  });
  return fc.oneof({ weight: 3, arbitrary: fuzzBytes([stream]) }, { weight: 2, arbitrary: edited });
}

const KEYS = ["type", "protocol", "tool", "version", "token", "test", "clientPorts", "edge", "message", "reason", "ports", "results", "streams", "direction", "durationS"];

function decodeAll(bytes: Uint8Array, cuts: Parameters<typeof chunk>[1]): { frames: unknown[]; error?: string } {
  const d = new FrameDecoder();
  const frames: unknown[] = [];
  for (const c of chunk(bytes, cuts)) {
    const r = d.push(c);
    frames.push(...r.frames);
    if (r.error) {
      check(r.error instanceof NativeProtocolError, `FrameDecoder failed with ${r.error}`);
      return { frames, error: r.error.message };
    }
  }
  return { frames };
}

/** Frames written by a session, each of which must pass the peer's schema. */
function recorder(schema: typeof ClientMessage | typeof ServerMessage, who: string) {
  let closed = false;
  return {
    transport: {
      write: (b: Uint8Array) => {
        check(!closed, `${who} wrote after it closed`);
        for (const f of new FrameDecoder().push(b).frames) check(schema.safeParse(f).success, () => `${who} wrote a frame its peer refuses: ${JSON.stringify(f).slice(0, 200)}`);
      },
      close: () => void (closed = true),
    },
    closed: () => closed,
  };
}

export const targets: Record<string, FuzzTarget> = {
  "anyperf FrameDecoder: frames or NativeProtocolError, the same in any chunking": syncTarget(
    fc.tuple(fc.oneof(conversation(clientStream, clientDocs, KEYS), conversation(serverStream, serverDocs, KEYS)), cutsArb),
    ([bytes, cuts]) => {
      const whole = bounded("FrameDecoder whole", () => decodeAll(bytes, []));
      const split = bounded("FrameDecoder chunked", () => decodeAll(bytes, cuts));
      check(JSON.stringify(whole) === JSON.stringify(split), () => `chunking changed the outcome: ${JSON.stringify(whole).slice(0, 200)} vs ${JSON.stringify(split).slice(0, 200)}`);
    },
  ),

  "anyperf ServerSession: never throws, writes only valid frames, nothing after close, ends at its deadline": syncTarget(
    fc.tuple(conversation(clientStream, clientDocs, KEYS), cutsArb, fc.boolean()),
    ([bytes, cuts, token]) => {
      const rec = recorder(ServerMessage, "ServerSession");
      let closedEvents = 0;
      const s = new ServerSession(rec.transport, (e) => void (e.kind === "closed" && closedEvents++), { version: "0.1.0", nowMs: 0, token: token ? "t0k" : undefined });
      bounded("ServerSession", () => {
        let now = 0;
        for (const c of chunk(bytes, cuts)) {
          s.receive(c, now++);
          if (s.phase === "preparing") s.accept([40010], now);
          if (s.phase === "finishing") s.sendResults(RESULTS);
        }
        s.check(now + 10 * DEADLINE_MS.running);
        s.eof();
      });
      check(s.phase === "done" && rec.closed(), `session still ${s.phase} after its deadline and EOF`);
      check(closedEvents <= 1, `${closedEvents} closed events`);
    },
  ),

  "anyperf ClientSession: never throws, writes only valid frames, nothing after close, ends at its deadline": syncTarget(
    fc.tuple(conversation(serverStream, serverDocs, KEYS), cutsArb),
    ([bytes, cuts]) => {
      const rec = recorder(ClientMessage, "ClientSession");
      let ends = 0;
      const c = new ClientSession(rec.transport, (e) => void ((e.kind === "failed" || e.kind === "results") && ends++), { version: "0.1.0", token: "t0k" });
      bounded("ClientSession", () => {
        c.start(0);
        let now = 0;
        for (const piece of chunk(bytes, cuts)) {
          c.receive(piece, now++);
          if (c.phase === "welcomed") c.request(REQ, [40001, 40002], now);
          if (c.phase === "running") {
            c.window("start", now);
            c.go();
            c.finish(now);
          }
        }
        c.check(now + 10 * DEADLINE_MS.results);
      });
      check(c.phase === "done" && rec.closed(), `session still ${c.phase} after its deadline`);
      check(ends === 1, `${ends} final events (failed or results), expected exactly one`);
    },
  ),
};
