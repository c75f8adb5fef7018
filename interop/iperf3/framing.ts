/**
 * Bytes on the iperf3 control connection (docs/protocols/iperf3.md §2): the 37-byte cookie, one-byte states, JSON
 * documents behind a 4-byte big-endian length, and the SERVER_ERROR payload (two big-endian int32: i_errno, errno).
 *
 * The two decoders are push parsers: feed any chunking, get typed messages. Each direction's grammar is fixed by
 * its own history, so no decoder needs to know what the other side said:
 *   client -> server: cookie, params frame, states...; after TEST_END a results frame, then states.
 *   server -> client: states...; after SERVER_ERROR its 8-byte payload; after EXCHANGE_RESULTS a results frame.
 * Where a frame is due, a non-zero first byte cannot start a length within our bounds (both are < 16 MiB), so the
 * states a peer may send at that moment instead (CLIENT_TERMINATE, SERVER_TERMINATE, SERVER_ERROR, ...) are taken as
 * states; any other byte is read as a length and fails the bound with a clear error.
 */
import { COOKIE_BYTES } from "./cookie.ts";
import { Limits, State, stateByte, stateFromByte } from "./constants.ts";
import { IErrno } from "./error-codes.ts";
import { Errno } from "../../lib/errno.ts";

/** A protocol violation, carrying the i_errno/errno pair we report to the peer (SERVER_ERROR) or to the user. */
export class Iperf3ProtocolError extends Error {
  constructor(message: string, readonly iErrno: number, readonly errno: number = Errno.EINVAL) {
    super(message);
    this.name = "Iperf3ProtocolError";
  }
}

/** Anything else a session hits is reported to the peer as an internal protocol error, never thrown past it. */
export function asProtocolError(e: unknown): Iperf3ProtocolError {
  if (e instanceof Iperf3ProtocolError) return e;
  return new Iperf3ProtocolError(`internal error: ${(e as Error)?.message ?? String(e)}`, IErrno.IEMESSAGE, Errno.EPROTO);
}

export function encodeState(state: State): Uint8Array {
  return Uint8Array.of(stateByte(state));
}

/** The 4-byte length and the JSON text. The stock peers write them as two segments; we write one buffer. */
export function encodeFrame(json: string): Uint8Array {
  const body = new TextEncoder().encode(json);
  const out = new Uint8Array(4 + body.length);
  new DataView(out.buffer).setUint32(0, body.length, false);
  out.set(body, 4);
  return out;
}

/** SERVER_ERROR state byte followed by i_errno and errno. */
export function encodeServerError(iErrno: number, errno: number): Uint8Array {
  const out = new Uint8Array(9);
  const dv = new DataView(out.buffer);
  out[0] = stateByte(State.SERVER_ERROR);
  dv.setInt32(1, iErrno, false);
  dv.setInt32(5, errno, false);
  return out;
}

export type ClientMessage =
  | { kind: "cookie"; bytes: Uint8Array }
  | { kind: "params"; json: Uint8Array }
  | { kind: "state"; state: number }
  | { kind: "results"; json: Uint8Array };

export type ServerMessage =
  | { kind: "state"; state: number }
  | { kind: "results"; json: Uint8Array }
  /** `errno` is absent when the peer closed after i_errno alone (3.12's authentication failure). */
  | { kind: "server-error"; iErrno: number; errno?: number };

/** Accumulates chunks without copying until a message needs contiguous bytes. */
class ByteQueue {
  private chunks: Uint8Array[] = [];
  private head = 0; // offset into chunks[0]
  length = 0;

  push(chunk: Uint8Array): void {
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.length += chunk.length;
  }

  peek(): number {
    return this.chunks[0]![this.head]!;
  }

  take(n: number): Uint8Array {
    const out = new Uint8Array(n);
    let filled = 0;
    while (filled < n) {
      const c = this.chunks[0]!;
      const m = Math.min(n - filled, c.length - this.head);
      out.set(c.subarray(this.head, this.head + m), filled);
      filled += m;
      this.head += m;
      if (this.head === c.length) {
        this.chunks.shift();
        this.head = 0;
      }
    }
    this.length -= n;
    return out;
  }
}

const CLIENT_INTERRUPTS: ReadonlySet<number> = new Set([State.CLIENT_TERMINATE, State.IPERF_DONE]);
const SERVER_INTERRUPTS: ReadonlySet<number> = new Set([State.SERVER_TERMINATE, State.SERVER_ERROR, State.ACCESS_DENIED, State.DISPLAY_RESULTS]);

type Need =
  | { what: "cookie" }
  /** `interrupts`: state bytes the peer may send instead of the frame (a non-zero byte cannot start a valid length). */
  | { what: "frame"; kind: "params" | "results"; max: number; interrupts: ReadonlySet<number> }
  | { what: "body"; kind: "params" | "results"; length: number }
  | { what: "state" }
  | { what: "error-payload" };

/** Shared machinery: a queue, the next thing the grammar expects, and a dead flag after an error. */
abstract class PushDecoder<M> {
  protected q = new ByteQueue();
  protected abstract need: Need;
  private failed = false;

  /** Feed bytes; returns every message completed by them. Throws Iperf3ProtocolError on a violation, then stays dead. */
  push(chunk: Uint8Array): M[] {
    if (this.failed) throw new Iperf3ProtocolError("decoder already failed", IErrno.IEMESSAGE);
    this.q.push(chunk);
    const out: M[] = [];
    try {
      for (let m = this.step(); m !== undefined; m = this.step()) out.push(m);
    } catch (e) {
      this.failed = true;
      throw e;
    }
    return out;
  }

  /** Bytes received but not yet part of a complete message. */
  get buffered(): number {
    return this.q.length;
  }

  protected abstract step(): M | undefined;

  /** Returns a frame message, a state (a non-zero byte where a frame was due), or undefined when more bytes are needed. */
  protected stepFrame(need: Extract<Need, { what: "frame" | "body" }>, onState: (s: number) => void): { kind: "params" | "results"; json: Uint8Array } | { kind: "state"; state: number } | undefined {
    if (need.what === "frame") {
      if (this.q.length === 0) return undefined;
      if (need.interrupts.has(stateFromByte(this.q.peek()))) {
        const state = stateFromByte(this.q.take(1)[0]!);
        onState(state);
        return { kind: "state", state };
      }
      if (this.q.length < 4) return undefined;
      const length = new DataView(this.q.take(4).buffer).getUint32(0, false);
      // Bounded before allocation: a hostile length never reserves memory.
      if (length > need.max) {
        const iErrno = need.kind === "params" ? IErrno.IERECVPARAMS : IErrno.IERECVRESULTS;
        throw new Iperf3ProtocolError(`${need.kind} JSON of ${length} bytes exceeds the ${need.max}-byte limit`, iErrno, Errno.EMSGSIZE);
      }
      this.need = { what: "body", kind: need.kind, length };
      return this.stepFrame(this.need, onState);
    }
    if (this.q.length < need.length) return undefined;
    const json = this.q.take(need.length);
    this.need = { what: "state" };
    return { kind: need.kind, json };
  }
}

/** Decodes what a client sends; used by our server. */
export class ClientStreamDecoder extends PushDecoder<ClientMessage> {
  protected need: Need = { what: "cookie" };

  constructor(private readonly limits = { params: Limits.maxParamsBytes, results: Limits.maxResultsBytes }) {
    super();
  }

  protected step(): ClientMessage | undefined {
    const need = this.need;
    switch (need.what) {
      case "cookie":
        if (this.q.length < COOKIE_BYTES) return undefined;
        this.need = { what: "frame", kind: "params", max: this.limits.params, interrupts: CLIENT_INTERRUPTS };
        return { kind: "cookie", bytes: this.q.take(COOKIE_BYTES) };
      case "frame":
      case "body":
        return this.stepFrame(need, (s) => this.afterState(s));
      case "state": {
        if (this.q.length === 0) return undefined;
        const state = stateFromByte(this.q.take(1)[0]!);
        this.afterState(state);
        return { kind: "state", state };
      }
      case "error-payload":
        throw new Error("unreachable: clients send no error payload");
    }
  }

  private afterState(state: number): void {
    if (state === State.TEST_END) this.need = { what: "frame", kind: "results", max: this.limits.results, interrupts: CLIENT_INTERRUPTS };
    else if (this.need.what === "frame" && this.need.kind === "params") this.need = { what: "state" };
  }
}

/** Decodes what a server sends; used by our client. */
export class ServerStreamDecoder extends PushDecoder<ServerMessage> {
  protected need: Need = { what: "state" };

  constructor(private readonly maxResults = Limits.maxResultsBytes) {
    super();
  }

  protected step(): ServerMessage | undefined {
    const need = this.need;
    switch (need.what) {
      case "state": {
        if (this.q.length === 0) return undefined;
        const state = stateFromByte(this.q.take(1)[0]!);
        this.afterState(state);
        return { kind: "state", state };
      }
      case "error-payload": {
        if (this.q.length < 8) return undefined;
        const dv = new DataView(this.q.take(8).buffer);
        this.need = { what: "state" };
        return { kind: "server-error", iErrno: dv.getInt32(0, false), errno: dv.getInt32(4, false) };
      }
      case "frame":
      case "body": {
        const m = this.stepFrame(need, (s) => this.afterState(s));
        if (m === undefined || m.kind === "state") return m;
        return { kind: "results", json: m.json };
      }
      case "cookie":
        throw new Error("unreachable: servers send no cookie");
    }
  }

  /** At EOF: a SERVER_ERROR cut short after i_errno (3.12 authentication failure) still yields its message. */
  end(): ServerMessage | undefined {
    if (this.need.what === "error-payload" && this.q.length >= 4) {
      const dv = new DataView(this.q.take(4).buffer);
      this.need = { what: "state" };
      return { kind: "server-error", iErrno: dv.getInt32(0, false) };
    }
    return undefined;
  }

  private afterState(state: number): void {
    if (state === State.SERVER_ERROR) this.need = { what: "error-payload" };
    else if (state === State.EXCHANGE_RESULTS) this.need = { what: "frame", kind: "results", max: this.maxResults, interrupts: SERVER_INTERRUPTS };
    else this.need = { what: "state" };
  }
}
