/**
 * ntttcp sync channels under fuzzing, both dialects: the Linux 4-byte sync framer and codec, the Linux receiver
 * (several senders on one instance) and sender state machines, and the Windows one-byte token exchange and gate.
 * Inputs are the captured sync streams of tests/fixtures/ntttcp mutated, and random command/value sequences.
 */
import fc from "fast-check";
import { decodeSyncInt, encodeSyncInt, SYNC_MESSAGE_BYTES, SyncCommand, SyncFramer, TestState } from "../../interop/ntttcp/linux-sync-codec.ts";
import { LinuxSyncReceiver } from "../../interop/ntttcp/linux-sync-receiver.ts";
import { LinuxSyncSender, type LinuxSyncSenderEvent } from "../../interop/ntttcp/linux-sync-sender.ts";
import { WindowsTokenGate } from "../../interop/ntttcp/windows-token.ts";
import { clientsOf, LINUX_SYNC_CAPTURES, parseCapture, streamOf } from "../fixtures/ntttcp/capture.ts";
import { bounded, check, chunk, cutsArb, fuzzBytes, quiet, RUN_LIMIT_MS, syncTarget, typed, type FuzzTarget } from "./harness.ts";
import { concatBytes } from "../../lib/bytes.ts";

const streams = LINUX_SYNC_CAPTURES.map(parseCapture).flatMap((cap) =>
  clientsOf(cap).flatMap((client) => (["client", "server"] as const).map((from) => ({ from, bytes: streamOf(cap, client, from) }))),
).filter((s) => s.bytes.length > 0);
const senderStreams = streams.filter((s) => s.from === "client").map((s) => s.bytes);
const receiverStreams = streams.filter((s) => s.from === "server").map((s) => s.bytes);

/** Values the two sides exchange: commands, states, the colliding cycles, extremes. */
const syncValue = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...Object.values(SyncCommand), ...Object.values(TestState), 0, 10, 60, 69, 76, 82, 88, 300) },
  { weight: 1, arbitrary: fc.constantFrom(-1, -0x8000_0000, 0x7fff_ffff) },
  { weight: 1, arbitrary: fc.integer({ min: -0x8000_0000, max: 0x7fff_ffff }) },
);
const syncStream = fc.oneof(
  fc.array(syncValue, { minLength: 1, maxLength: 12 }).map((vs) => concatBytes(vs.map(encodeSyncInt))),
  fuzzBytes(streams.map((s) => s.bytes), { maxRandom: 64 }),
);

/** A transport that records writes; a write after close is counted (the receiver target) or refused (the rest). */
class Conn {
  readonly values: number[] = [];
  private partial = new SyncFramer();
  closed = 0;
  lateWrites = 0;
  constructor(private readonly refuseLate = true) {}
  write(b: Uint8Array): void {
    if (this.closed > 0) {
      check(!this.refuseLate, "wrote to a closed sync connection");
      this.lateWrites++;
      return;
    }
    this.values.push(...this.partial.push(b));
  }
  close(): void {
    this.closed++;
  }
}

type ReceiverStep =
  | { kind: "data"; conn: number; bytes: Uint8Array; cuts: readonly number[] | "bytewise" }
  | { kind: "close"; conn: number }
  | { kind: "finish" }
  | { kind: "reset" };

const receiverStep: fc.Arbitrary<ReceiverStep> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant("data" as const), conn: fc.nat({ max: 9 }), bytes: syncStream, cuts: cutsArb }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("close" as const), conn: fc.nat({ max: 9 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("finish" as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("reset" as const) }) },
);

function runReceiver(steps: ReceiverStep[], multiClient: boolean, duration: number): void {
  const rx = new LinuxSyncReceiver({ duration, multiClient }, () => {});
  const conns = Array.from({ length: 10 }, () => new Conn(false));
  const sessions = conns.map((c) => quiet("LinuxSyncReceiver.attach", () => rx.attach(c)));
  const received = conns.map(() => new SyncFramer());
  const asked = conns.map(() => 0);
  const lastCount = conns.map(() => 0);
  for (const s of steps) {
    if (s.kind === "data") {
      const c = conns[s.conn]!;
      for (const part of chunk(s.bytes, s.cuts)) {
        quiet("LinuxSyncReceiverConnection.onData", () => sessions[s.conn]!.onData(part));
        if (c.closed === 0) {
          const vs = received[s.conn]!.push(part);
          asked[s.conn]! += vs.length;
        }
      }
    } else if (s.kind === "close") {
      quiet("LinuxSyncReceiverConnection.onClose", () => sessions[s.conn]!.onClose());
      check(conns[s.conn]!.closed === 1, "closed sync connection was not closed exactly once");
    } else if (s.kind === "finish") quiet("LinuxSyncReceiver.finish", () => rx.finish());
    else quiet("LinuxSyncReceiver.reset", () => rx.reset());
    conns.forEach((c, i) => {
      // Every request is answered once; in -M the releases of waiting senders come on top.
      if (c.closed === 0) check(multiClient ? c.values.length >= asked[i]! : c.values.length === asked[i]!, `connection ${i}: ${c.values.length} replies to ${asked[i]} requests`);
      check(c.values.length >= lastCount[i]!, "replies went missing");
      lastCount[i] = c.values.length;
    });
    check([TestState.notStarted, TestState.running, TestState.finished].includes(rx.state), `receiver state ${rx.state}`);
  }
  for (const c of conns) for (const v of c.values) check(Number.isInteger(v) && v >= -0x8000_0000 && v <= 0x7fff_ffff, `reply ${v} is not an int32`);
  const late = conns.reduce((n, c) => n + c.lateWrites, 0);
  check(late === 0, `${late} writes to closed sync connections`);
  quiet("LinuxSyncReceiver.closeAll", () => rx.closeAll());
  check(conns.every((c) => c.closed === 1), "closeAll left a connection open or closed one twice");
}

type SenderStep =
  | { kind: "data"; bytes: Uint8Array; cuts: readonly number[] | "bytewise" }
  | { kind: "dataReady" }
  | { kind: "end"; cutShort: boolean }
  | { kind: "endTimedOut" }
  | { kind: "close" };

const senderStep: fc.Arbitrary<SenderStep> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant("data" as const), bytes: fc.oneof(syncStream, fuzzBytes(receiverStreams, { maxRandom: 16 })), cuts: cutsArb }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("dataReady" as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("end" as const), cutShort: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("endTimedOut" as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("close" as const) }) },
);

function runSender(steps: SenderStep[], cycle: number, last: boolean, avoidCollisions: boolean): void {
  const conn = new Conn();
  const events: LinuxSyncSenderEvent[] = [];
  const tx = new LinuxSyncSender({ cycle, duration: cycle, last, avoidCollisions }, conn, (e) => events.push(e));
  quiet("LinuxSyncSender.start", () => tx.start());
  for (const s of steps) {
    if (s.kind === "data") for (const part of chunk(s.bytes, s.cuts)) quiet("LinuxSyncSender.onData", () => tx.onData(part));
    // The glue calls dataReady only when asked (connect-data); elsewhere the sender rejects it by design.
    else if (s.kind === "dataReady") {
      if (tx.phase === "connect-data") quiet("LinuxSyncSender.dataReady", () => tx.dataReady());
    } else if (s.kind === "end") quiet("LinuxSyncSender.end", () => tx.end(s.cutShort));
    else if (s.kind === "endTimedOut") quiet("LinuxSyncSender.endTimedOut", () => tx.endTimedOut());
    else quiet("LinuxSyncSender.onClose", () => tx.onClose());
    if (tx.phase === "failed") check(conn.closed >= 1, "failed without closing the sync connection");
    check(tx.cycle === undefined || tx.cycle >= 0, `negotiated a negative cycle ${tx.cycle}`);
  }
  const finals = events.filter((e) => e.type === "failed" || e.type === "ended");
  check(finals.length <= 1, `${finals.length} failed/ended events`);
  if (finals.length === 1) check(tx.phase === "failed" || tx.phase === "done", `final event but phase ${tx.phase}`);
}

export const targets: Record<string, FuzzTarget> = {
  "ntttcp SyncFramer and decodeSyncInt: int32 values whatever the chunking, at most 3 bytes held": syncTarget(
    fc.tuple(syncStream, cutsArb, fc.nat({ max: 8 })),
    ([bytes, cuts, offset]) =>
      bounded("SyncFramer", () => {
        const f = new SyncFramer();
        const values = chunk(bytes, cuts).flatMap((c) => {
          const out = f.push(c);
          check(f.partial < SYNC_MESSAGE_BYTES, `framer holds ${f.partial} bytes`);
          return out;
        });
        check(values.length === Math.floor(bytes.length / 4) && f.partial === bytes.length % 4, "values lost or invented");
        values.forEach((v, i) => check(v === new DataView(bytes.buffer, bytes.byteOffset).getInt32(i * 4, false), `value ${i} differs from the stream`));
        const d = typed("decodeSyncInt", () => decodeSyncInt(bytes, offset), RangeError);
        check(d.ok === bytes.length - offset >= 4, "decodeSyncInt fails iff fewer than 4 bytes remain");
        if (d.ok) check(Bun.deepEquals(encodeSyncInt(d.value), bytes.slice(offset, offset + 4)), "sync value does not re-encode");
      }, RUN_LIMIT_MS),
  ),

  "ntttcp LinuxSyncReceiver: every request answered once, no write to a closed sender, never throws": syncTarget(
    fc.tuple(fc.array(receiverStep, { minLength: 1, maxLength: 16 }), fc.boolean(), fc.constantFrom(0, 1, 10, 60, 69)),
    ([steps, multiClient, duration]) => bounded("LinuxSyncReceiver", () => runReceiver(steps, multiClient, duration), RUN_LIMIT_MS),
  ),

  "ntttcp LinuxSyncSender: never throws, one final event, closes on failure": syncTarget(
    fc.tuple(fc.array(senderStep, { minLength: 1, maxLength: 12 }), fc.constantFrom(0, 1, 10, 69, 76, 82, 88, 300), fc.boolean(), fc.boolean()),
    ([steps, cycle, last, avoid]) => bounded("LinuxSyncSender", () => runSender(steps, cycle, last, avoid), RUN_LIMIT_MS),
  ),

  "ntttcp Windows token exchange and gate: one outcome per thread, onAll or onFail exactly once": syncTarget(
    fc.tuple(
      fc.integer({ min: 1, max: 6 }),
      fc.array(
        fc.record({
          thread: fc.nat({ max: 5 }),
          kind: fc.constantFrom("start" as const, "data" as const, "close" as const),
          bytes: fc.uint8Array({ maxLength: 3 }),
        }),
        { maxLength: 40 },
      ),
    ),
    ([threads, steps]) =>
      bounded("WindowsTokenGate", () => {
        let all = 0;
        const fails: number[] = [];
        const gate = new WindowsTokenGate(threads, () => all++, (t) => fails.push(t));
        const conns = Array.from({ length: threads }, () => new Conn());
        const ex = conns.map((c, i) => gate.exchange(i, c));
        for (const s of steps) {
          const i = s.thread % threads;
          if (s.kind === "start") quiet("WindowsTokenExchange.start", () => ex[i]!.start());
          else if (s.kind === "data") quiet("WindowsTokenExchange.onData", () => ex[i]!.onData(s.bytes));
          else quiet("WindowsTokenExchange.onClose", () => ex[i]!.onClose());
          check(all <= 1 && fails.length <= 1 && all + fails.length <= 1, "the gate decided more than once");
          check(gate.completed <= threads, "more completed threads than threads");
        }
        if (all === 1) check(gate.completed === threads, "onAll before every thread completed");
      }, RUN_LIMIT_MS),
  ),
};
