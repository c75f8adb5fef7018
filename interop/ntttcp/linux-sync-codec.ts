/**
 * ntttcp-for-linux sync channel (TCP port base−1): every message in either direction is one 32-bit signed big-endian
 * integer. Commands and replies share the value space with cycle times, which is why a proposed cycle of 69/76/82/88
 * seconds is taken as a command by the real receiver (docs/protocols/ntttcp-linux.md §4.2).
 */
import { FixedFramer } from "../../lib/fixed-framer.ts";

export const SyncCommand = {
  query: 0x58, // 'X'
  run: 0x52, // 'R': sender asks to start; receiver answers "run"
  last: 0x4c, // 'L': last client of a multi-client test
  exit: 0x45, // 'E': sender ended or was interrupted; receiver's "rejected" in -M
  wait: 0x57, // 'W': receiver (-M) tells a sender to wait for the last client
} as const;

export const TestState = {
  notStarted: 11,
  running: 12,
  finished: 13,
} as const;
export type TestState = (typeof TestState)[keyof typeof TestState];

/** Cycle totals the receiver would read as a command instead of a duration. */
export const COLLIDING_CYCLES: readonly number[] = [SyncCommand.exit, SyncCommand.last, SyncCommand.run, SyncCommand.query];

export const SYNC_MESSAGE_BYTES = 4;

export function encodeSyncInt(value: number): Uint8Array {
  if (!Number.isInteger(value) || value < -0x80000000 || value > 0x7fffffff) {
    throw new RangeError(`sync value ${value} is not a 32-bit signed integer`);
  }
  const out = new Uint8Array(SYNC_MESSAGE_BYTES);
  new DataView(out.buffer).setInt32(0, value, false);
  return out;
}

export function decodeSyncInt(bytes: Uint8Array, offset = 0): number {
  if (bytes.length - offset < SYNC_MESSAGE_BYTES) throw new RangeError("sync message needs 4 bytes");
  return new DataView(bytes.buffer, bytes.byteOffset + offset, SYNC_MESSAGE_BYTES).getInt32(0, false);
}

/** Sync integers from a byte stream however TCP splits it (at most 3 bytes pending). */
export class SyncFramer {
  private readonly framer = new FixedFramer(SYNC_MESSAGE_BYTES);

  push(chunk: Uint8Array): number[] {
    return this.framer.push(chunk).map((m) => decodeSyncInt(m));
  }

  /** Bytes of an incomplete message, left over when the peer closes mid-message. */
  get partial(): number {
    return this.framer.pending;
  }
}

/**
 * Cycle W+t+C the sender should propose: one that the receiver cannot mistake for a command
 * (docs/protocols/ntttcp-interop.md §5.3).
 */
export function safeCycleProposal(cycleSeconds: number): number {
  let v = Math.max(0, Math.trunc(cycleSeconds));
  while (COLLIDING_CYCLES.includes(v)) v += 1;
  return v;
}

export function describeSyncValue(v: number): string {
  switch (v) {
    case SyncCommand.query:
      return "'X'";
    case SyncCommand.run:
      return "'R'";
    case SyncCommand.last:
      return "'L'";
    case SyncCommand.exit:
      return "'E'";
    case SyncCommand.wait:
      return "'W'";
    case TestState.notStarted:
      return "TEST_NOT_STARTED";
    case TestState.running:
      return "TEST_RUNNING";
    case TestState.finished:
      return "TEST_FINISHED";
    default:
      return String(v);
  }
}
