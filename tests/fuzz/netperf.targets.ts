/**
 * netperf 2.7.0 control messages under fuzzing: the 656-byte frame reader, the (total) message decoders, the
 * server's request check, and both sessions, fed mutated captures from tests/fixtures/netperf. Decoders never throw
 * and keep every field within its wire type; sessions never throw, write whole 656-byte messages only while open,
 * and end once the control connection is gone.
 */
import fc from "fast-check";
import { NetperfClientSession, type ClientAction, type ClientDataCounters } from "../../interop/netperf/client-session.ts";
import { ServerDataSetup, type ServerDataCounters } from "../../interop/netperf/data-setup.ts";
import { FrameReader } from "../../interop/netperf/frame-reader.ts";
import { decodeCpuCalibrateReply, decodePassphrase, servErrno } from "../../interop/netperf/minor-messages.ts";
import { decodeOmniRequest, encodeOmniRequest, OmniRequest } from "../../interop/netperf/omni-request.ts";
import { decodeOmniResponse, encodeOmniResponse, OmniResponse } from "../../interop/netperf/omni-response.ts";
import { decodeOmniResults, encodeOmniResults, OmniResults } from "../../interop/netperf/omni-results.ts";
import { checkOmniRequest, DEFAULT_LIMITS, type RequestLimits } from "../../interop/netperf/request-check.ts";
import { DEFAULT_SERVER_OPTIONS, NetserverSession, type ServerAction } from "../../interop/netperf/server-session.ts";
import { buildOmniRequest } from "../../interop/netperf/test-request.ts";
import { MESSAGE_SIZE, messageType } from "../../interop/netperf/words.ts";
import { CAPTURE_PARAMS } from "../fixtures/netperf/capture-params.ts";
import { captureConversations, CAPTURES, split656 } from "../fixtures/netperf/load.ts";
import { bounded, check, chunk, cutsArb, fixedSize, fuzzBytes, quiet, RUN_LIMIT_MS, syncTarget, typed, type FuzzTarget } from "./harness.ts";
import { concatBytes } from "../../lib/bytes.ts";

const conversations = CAPTURES.map((name) => ({ name, control: captureConversations(name)[0]! }));
const toServer = conversations.map((c) => c.control.toServer);
const toClient = conversations.map((c) => c.control.toClient);
const requestFrames = toServer.flatMap(split656);
const replyFrames = toClient.flatMap(split656);
const allFrames = [...requestFrames, ...replyFrames];

const I32 = [-0x8000_0000, 0x7fff_ffff] as const;

function checkStrings(o: Record<string, unknown>, sizes: Record<string, number>): void {
  for (const [k, size] of Object.entries(sizes)) {
    const s = o[k];
    check(typeof s === "string" && s.length <= size && !s.includes("\0"), `${k} is not a NUL-free string of at most ${size} bytes`);
    for (let i = 0; i < s.length; i++) check(s.charCodeAt(i) <= 0xff, `${k} holds a character beyond Latin-1`);
  }
}

function checkWords(o: Record<string, unknown>, kinds: Record<string, "i32" | "u32" | "f32" | "u64">): void {
  for (const [k, kind] of Object.entries(kinds)) {
    const v = o[k];
    check(typeof v === "number", `${k} is not a number`);
    if (kind === "i32") check(Number.isInteger(v) && v >= I32[0] && v <= I32[1], `${k}=${v} is not an int32`);
    if (kind === "u32") check(Number.isInteger(v) && v >= 0 && v <= 0xffff_ffff, `${k}=${v} is not a uint32`);
    if (kind === "u64") check(Number.isInteger(v) && v >= 0 && v <= 2 ** 64, `${k}=${v} is not a uint64`);
  }
}

const REQUEST_KINDS = {
  type: "u32", cpuAffinity: "i32", sendBufSize: "i32", sendSize: "i32", sendAlignment: "u32", sendOffset: "u32", sendWidth: "u32",
  requestSize: "i32", recvBufSize: "i32", receiveSize: "i32", recvAlignment: "u32", recvOffset: "u32", recvWidth: "u32", responseSize: "i32",
  flags: "u32", cpuRate: "f32", testLength: "i32", soRcvAvoid: "u32", soSndAvoid: "u32", sendDirtyCount: "i32", recvDirtyCount: "i32",
  recvCleanCount: "i32", dataPort: "u32", ipFamily: "u32", socketType: "u32", protocol: "u32", direction: "u32", netperfPort: "u32",
  intervalBurst: "u32", intervalUsecs: "u32", socketPrio: "i32", socketTos: "i32",
} as const;
const RESPONSE_KINDS = {
  type: "u32", servErrno: "i32", recvBufSize: "i32", receiveSize: "i32", recvWidth: "i32", sendBufSize: "i32", sendSize: "i32", sendWidth: "i32",
  flags: "u32", cpuRate: "f32", testLength: "u32", soRcvAvoid: "u32", soSndAvoid: "u32", dataPort: "u32", intervalBurst: "u32",
  intervalUsecs: "u32", cpuFrequency: "u32", securityInfo: "u32", socketPrio: "i32", socketTos: "i32",
} as const;
const RESULTS_KINDS = {
  type: "u32", servErrno: "i32", bytesReceived: "u64", recvCalls: "u32", recvBufSize: "i32", bytesSent: "u64", sendCalls: "u32", sendBufSize: "i32",
  failedSends: "u32", transReceived: "u32", cpuMethod: "u32", numCpus: "u32", peakCpuId: "i32", vendor: "i32", device: "i32", subvendor: "i32",
  subdevice: "i32", transportRetrans: "i32",
} as const;

/** When the decoded value is one the encoder accepts, encoding and decoding it again gives it back unchanged. */
function stable<T>(what: string, value: T, schema: { safeParse(v: unknown): { success: boolean } }, encode: (v: T) => Uint8Array, decode: (b: Uint8Array) => T): void {
  if (!schema.safeParse(value).success) return;
  const bytes = typed(`encode(${what})`, () => encode(value));
  check(bytes.ok && bytes.value.length === MESSAGE_SIZE, `${what}: the encoder failed on a value its schema accepts`);
  check(Bun.deepEquals(decode(bytes.value), value), `${what}: decode(encode(decoded)) changed the message`);
}

const LIMITS: RequestLimits[] = [
  { ...DEFAULT_LIMITS, cpuMeasurable: true },
  { ...DEFAULT_LIMITS, families: "ipv6", maxTransactionSize: 64, maxStreamIo: 1000, maxSocketBuffer: 4096 },
];

// ---------------------------------------------------------------------------------------------------------------
// Sessions.

const BOUND = [
  { port: 40000, recvBufSize: 131072, sendBufSize: 16384 },
  { port: 0, recvBufSize: 0, sendBufSize: 0 },
  { port: 65535, recvBufSize: 0x7fff_ffff, sendBufSize: 1 },
] as const;

function counters(cpu: boolean): ServerDataCounters {
  return {
    bytesReceived: 123456,
    recvCalls: 100,
    bytesSent: 654321,
    sendCalls: 99,
    transactions: 1000,
    recvBufSize: 131072,
    sendBufSize: 16384,
    transportRetrans: 0,
    congestionName: "cubic",
    ...(cpu ? { cpu: { util: 12.5, user: 5, system: 7.5, iowait: 0, irq: 0, softirq: 0, peakCpuId: 0, peakCpuUtil: 20, method: 8, numCpus: 2 } } : {}),
  };
}

interface ServerPlan {
  bytes: Uint8Array;
  cuts: readonly number[] | "bytewise";
  bound: number;
  /** Glue outcomes, cycled: "ok" binds/ends normally, "fail" reports an errno. */
  glue: Array<"ok" | "fail" | "late">;
  ticks: number[];
  passphrase: boolean;
}

const i32 = fc.oneof(fc.constantFrom(-1, 0, 1, 8, 1024, 65507, 65536, 0x7fff_ffff, -0x8000_0000), fc.integer({ min: -0x8000_0000, max: 0x7fff_ffff }));
const u32 = fc.oneof(fc.constantFrom(0, 1, 2, 4, 6, 8, 17, 65535, 65536, 0xffff_ffff), fc.nat({ max: 0xffff_ffff }));
/** Mostly what a netperf client sends, sometimes anything: most requests must pass the check to reach the session. */
const usual = <T>(common: fc.Arbitrary<T>, any: fc.Arbitrary<T>) => fc.oneof({ weight: 4, arbitrary: common }, { weight: 1, arbitrary: any });
const size = usual(fc.constantFrom(-1, 1, 32, 1024, 16384, 65507), i32);
const port = usual(fc.nat({ max: 65535 }), u32);

/** DO_OMNI requests built field by field, to reach the checks behind a well-formed message. */
const structuredRequest: fc.Arbitrary<Uint8Array> = fc
  .record({
    cpuAffinity: i32, sendBufSize: usual(fc.constantFrom(-1, 0, 16384, 212992), i32), sendSize: size, sendAlignment: u32, sendOffset: u32,
    sendWidth: u32, requestSize: size, recvBufSize: usual(fc.constantFrom(-1, 0, 131072, 212992), i32), receiveSize: size,
    recvAlignment: u32, recvOffset: u32, recvWidth: u32, responseSize: size,
    flags: usual(fc.constantFrom(0, 0x1, 0x4, 0x8, 0x9, 0x20, 0x28, 0x8000_0008, 0x2d), u32),
    testLength: fc.oneof(fc.constantFrom(0, 1, 2, -1, -5000, -0x8000_0000, 0x7fff_ffff), i32),
    dataPort: port, ipFamily: usual(fc.constantFrom(4, 6, 0), u32), direction: usual(fc.constantFrom(2, 4, 6), u32), netperfPort: port,
    socket: usual(fc.constantFrom<[number, number]>([1, 6], [2, 17], [1, 0], [2, 0]), fc.tuple(u32, u32)), socketPrio: i32, socketTos: i32,
    congControl: fc.string({ maxLength: 16 }), fillFile: fc.string({ maxLength: 32 }),
  })
  .chain(({ socket, ...fields }) =>
    // cpu_rate is a float32 on the wire; the schema refuses non-finite values, so they are written afterwards.
    fc.oneof(fc.constantFrom(0, 100, Infinity, -Infinity, NaN), fc.float()).map((cpuRate) => {
      const b = encodeOmniRequest({
        ...fields,
        socketType: socket[0]!,
        protocol: socket[1]!,
        congControl: latin1(fields.congControl),
        fillFile: latin1(fields.fillFile),
      });
      new DataView(b.buffer).setFloat32(60, cpuRate, false);
      return b;
    }),
  );

function latin1(s: string): string {
  return s.replace(/[^\x00-\xff]/g, "?").replace(/\0/g, "");
}

/** Whole-frame mutations keep the stream aligned, byte mutations shift it: both matter. */
const clientStream = fc.oneof(
  fc.array(fc.oneof(fixedSize(requestFrames, MESSAGE_SIZE), structuredRequest), { minLength: 1, maxLength: 4 }).map(concatBytes),
  fuzzBytes(toServer, { maxRandom: 1400 }),
);

const serverPlan: fc.Arbitrary<ServerPlan> = fc.record({
  bytes: clientStream,
  cuts: cutsArb,
  bound: fc.nat({ max: BOUND.length - 1 }),
  glue: fc.array(fc.constantFrom("ok" as const, "fail" as const, "late" as const), { minLength: 1, maxLength: 4 }),
  ticks: fc.array(fc.constantFrom(0, 10, 1000, 5000, 20_000, 130_000), { minLength: 1, maxLength: 4 }),
  passphrase: fc.boolean(),
});

function runServer(p: ServerPlan): void {
  const writes: Uint8Array[] = [];
  const actions: ServerAction[] = [];
  let closes = 0;
  const io = {
    write: (b: Uint8Array) => {
      check(closes === 0, "netserver session wrote after closing");
      check(b.length === MESSAGE_SIZE, `netserver session wrote ${b.length} bytes, not one message`);
      writes.push(b.slice());
    },
    close: () => void closes++,
    act: (a: ServerAction) => void actions.push(a),
  };
  const s = new NetserverSession(io, { ...DEFAULT_SERVER_OPTIONS, limits: LIMITS[0]!, cpuCount: 2, ...(p.passphrase ? { passphrase: "secret" } : {}) }, 0);
  let now = 0;
  let step = 0;
  const glue = () => {
    for (let a = actions.shift(); a; a = actions.shift()) {
      if (a.kind === "bind") {
        check(ServerDataSetup.safeParse(a.setup).success, "bind action with a setup its schema rejects");
        const how = p.glue[step++ % p.glue.length];
        if (how === "fail") quiet("dataFailed", () => s.dataFailed(98, now));
        else {
          const r = typed("NetserverSession.dataBound", () => s.dataBound(BOUND[p.bound]!, now), Error);
          if (!r.ok) throw new Error(`dataBound threw ${r.error.name}: ${r.error.message}`);
        }
      } else if (a.kind === "start") {
        const how = p.glue[step++ % p.glue.length];
        if (how === "fail") quiet("dataFailed", () => s.dataFailed(104, now));
        else if (how === "ok") quiet("dataEnded", () => s.dataEnded(counters(a.run.setup.measureCpu), now + 1000));
        // "late": the data plane reports only when stopped by the timer (below).
      } else if (a.kind === "stop") {
        quiet("dataEnded", () => s.dataEnded(counters(false), now));
      }
    }
  };
  chunk(p.bytes, p.cuts).forEach((c, i) => {
    quiet("NetserverSession.receive", () => s.receive(c, now));
    glue();
    now += p.ticks[i % p.ticks.length]!;
    quiet("NetserverSession.tick", () => s.tick(now));
    glue();
  });
  quiet("NetserverSession.controlClosed", () => s.controlClosed(now));
  glue();
  check(s.state === "closed", `netserver session still ${s.state} after the control connection closed`);
  check(closes === 1, `control connection closed ${closes} times`);
  check(s.nextDeadlineMs() === undefined, "a closed session still wants a timer");
}

const LOCAL: ClientDataCounters = { elapsedS: 2, bytesSent: 1000, bytesReceived: 1000, sendCalls: 10, recvCalls: 10, failedSends: 0, transactions: 10 };

const clientOptions = CAPTURES.map((name) => {
  const c = CAPTURE_PARAMS[name];
  return {
    request: OmniRequest.parse(buildOmniRequest(c.params).request),
    rounds: c.rounds,
    responseTimeoutMs: 120_000,
    closeTimeoutMs: 60_000,
    ...(c.passphrase !== undefined ? { passphrase: c.passphrase } : {}),
  };
});

function runClient(bytes: Uint8Array, cuts: readonly number[] | "bytewise", option: number, ticks: number[], closeAtEnd: boolean): void {
  const log: ClientAction[] = [];
  let starts = 0;
  let closes = 0;
  let written = 0;
  const io = {
    write: (b: Uint8Array) => {
      check(closes === 0, "netperf session wrote after closing");
      check(b.length === MESSAGE_SIZE, `netperf session wrote ${b.length} bytes`);
      written++;
    },
    close: () => void closes++,
    act: (a: ClientAction) => {
      log.push(a);
      if (a.kind === "start-data") starts++;
    },
  };
  const s = new NetperfClientSession(io, clientOptions[option]!);
  let now = 0;
  // The glue runs each data phase it is asked for and reports it; that may start the next round.
  const glue = () => {
    while (starts > 0) {
      starts--;
      now += 1000;
      quiet("NetperfClientSession.dataDone", () => s.dataDone(LOCAL, now));
    }
  };
  quiet("NetperfClientSession.start", () => s.start(now));
  chunk(bytes, cuts).forEach((c, i) => {
    quiet("NetperfClientSession.receive", () => s.receive(c, now));
    glue();
    now += ticks[i % ticks.length]!;
    quiet("NetperfClientSession.tick", () => s.tick(now));
  });
  if (closeAtEnd) quiet("NetperfClientSession.controlClosed", () => s.controlClosed(now));
  else quiet("NetperfClientSession.tick", () => s.tick(now + 86_400_000));
  quiet("NetperfClientSession.controlClosed", () => s.controlClosed(now + 86_400_000));
  check(s.state === "done", `netperf session still ${s.state} after close and a day`);
  const ends = log.filter((a) => a.kind === "finished" || a.kind === "failed");
  check(closes === 1, `control connection closed ${closes} times`);
  check(ends.length === 1 && log[log.length - 1] === ends[ends.length - 1], `${ends.length} final actions, or actions after the final one`);
  check(written >= 1, "no request was written");
}

export const targets: Record<string, FuzzTarget> = {
  "netperf FrameReader: whole 656-byte messages in order, whatever the chunking, never more than one held": syncTarget(
    fc.tuple(fc.array(fuzzBytes(allFrames, { maxRandom: 2000, maxMutations: 4 }), { minLength: 1, maxLength: 3 }).map(concatBytes), cutsArb),
    ([bytes, cuts]) =>
      bounded("FrameReader", () => {
        const r = new FrameReader();
        const frames = chunk(bytes, cuts).flatMap((c) => {
          const out = r.push(c);
          check(r.pending < MESSAGE_SIZE, `reader holds ${r.pending} bytes`);
          return out;
        });
        check(frames.length === Math.floor(bytes.length / MESSAGE_SIZE) && r.pending === bytes.length % MESSAGE_SIZE, "frames lost or invented");
        frames.forEach((f, i) => check(Bun.deepEquals(f, bytes.subarray(i * MESSAGE_SIZE, (i + 1) * MESSAGE_SIZE)), `frame ${i} differs from the stream`));
      }, RUN_LIMIT_MS),
  ),

  "netperf decoders are total over 656 bytes and keep every field within its wire type": syncTarget(fixedSize(allFrames, MESSAGE_SIZE), (frame) => {
    const req = typed("decodeOmniRequest", () => decodeOmniRequest(frame));
    const rsp = typed("decodeOmniResponse", () => decodeOmniResponse(frame));
    const res = typed("decodeOmniResults", () => decodeOmniResults(frame));
    check(req.ok && rsp.ok && res.ok, "a decoder threw");
    checkWords(req.value, REQUEST_KINDS);
    checkStrings(req.value, { congControl: 16, fillFile: 32 });
    check(typeof req.value.netperfIp === "string" && typeof req.value.netserverIp === "string", "addresses are not strings");
    checkWords(rsp.value, RESPONSE_KINDS);
    checkStrings(rsp.value, { systemModel: 33, cpuModel: 80, securityString: 16 });
    checkWords(res.value, RESULTS_KINDS);
    checkStrings(res.value, { ifname: 16, driver: 32, version: 32, firmware: 32, bus: 32, ifslot: 16, congControl: 16 });
    stable("request", req.value, OmniRequest, encodeOmniRequest, decodeOmniRequest);
    stable("response", rsp.value, OmniResponse, encodeOmniResponse, decodeOmniResponse);
    stable("results", res.value, OmniResults, encodeOmniResults, decodeOmniResults);
    const minor = typed("minor decoders", () => [decodePassphrase(frame), decodeCpuCalibrateReply(frame), servErrno(frame), messageType(frame)]);
    check(minor.ok, "a minor-message decoder threw");
  }),

  "netperf checkOmniRequest: a setup within the limits or an errno": syncTarget(
    fc.tuple(fc.oneof(fixedSize(requestFrames, MESSAGE_SIZE), structuredRequest), fc.nat({ max: LIMITS.length - 1 })),
    ([frame, li]) => {
      const limits = LIMITS[li]!;
      const req = decodeOmniRequest(frame);
      const r = typed("checkOmniRequest", () => checkOmniRequest(req, limits));
      check(r.ok, "checkOmniRequest threw");
      const c = r.value;
      if (!c.ok) {
        check(Number.isInteger(c.errno) && c.errno > 0 && c.reason.length > 0, "refusal without an errno and a reason");
        return;
      }
      const p = ServerDataSetup.safeParse(c.setup);
      check(p.success, () => `setup violates its schema: ${p.error?.issues[0]?.path.join(".")} ${p.error?.issues[0]?.message}`);
      const s = c.setup;
      check(s.sendBuffer === undefined || s.sendBuffer <= limits.maxSocketBuffer, "send buffer above the limit");
      check(s.recvBuffer === undefined || s.recvBuffer <= limits.maxSocketBuffer, "receive buffer above the limit");
      if (s.serverReceives && s.serverSends) {
        check(s.requestSize >= 1 && s.requestSize <= limits.maxTransactionSize && s.responseSize >= 1 && s.responseSize <= limits.maxTransactionSize, "transaction size beyond the limit");
      }
      check(limits.families === "any" || s.family === limits.families, "a family the server does not serve");
    },
  ),

  "netperf NetserverSession: never throws, whole messages only, closed once the client is gone": syncTarget(serverPlan, (p) => bounded("NetserverSession", () => runServer(p), RUN_LIMIT_MS)),

  "netperf NetperfClientSession: never throws, exactly one final action, done after close": syncTarget(
    fc.tuple(
      fc.oneof(fc.array(fixedSize(replyFrames, MESSAGE_SIZE), { minLength: 1, maxLength: 4 }).map(concatBytes), fuzzBytes(toClient, { maxRandom: 1400 })),
      cutsArb,
      fc.nat({ max: clientOptions.length - 1 }),
      fc.array(fc.constantFrom(0, 10, 1000, 60_000, 130_000), { minLength: 1, maxLength: 4 }),
      fc.boolean(),
    ),
    ([bytes, cuts, option, ticks, closeAtEnd]) => bounded("NetperfClientSession", () => runClient(bytes, cuts, option, ticks, closeAtEnd), RUN_LIMIT_MS),
  ),
};
