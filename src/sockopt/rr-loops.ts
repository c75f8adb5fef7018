import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { SLOTS_PER_STREAM, Slot } from "../counters.ts";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * The TCP_RR and TCP_CRR loops of rr-loops.c, compiled by bun:ffi's cc (TinyCC, part of Bun) once per thread on
 * first use. A pinned TCP_RR 1,1 spent about 3 µs of user time per transaction more than netperf + netserver: two
 * FFI calls, a JavaScript callback, two clock reads and the counters per transaction. In C the loop pays one FFI
 * call per slice. Undefined where there is no cc (Deno, no bun:ffi, a failed compile) or ANYPERF_NO_C_LOOPS is set
 * (to measure the difference): the JavaScript loops run instead.
 */

/** Length of every loop's `out` (rr-loops.c writes out[0] to out[4]). */
export const LOOP_OUT = 5;

/** How a loop ended (rr-loops.c's END_*). */
export const LoopEnd = { slice: 0, timeout: 1, eof: 2, error: 3, odd: 4, partial: 5 } as const;

/** How a loop that the caller need not finish ended, as BlockingSocket.readSlice says it. */
export function readResultOf(end: number): "slice" | "timeout" | "eof" | "error" {
  return end === LoopEnd.timeout ? "timeout" : end === LoopEnd.eof ? "eof" : end === LoopEnd.error ? "error" : "slice";
}

/** The counters a loop writes per transaction, as a StreamContext holds them (its block of the shared counters). */
export interface LoopCounters {
  c: Float64Array;
  o: number;
  hist: Uint32Array;
}

export interface RrLoops {
  /** Serves whole requests with whole responses for `sliceUs`; `out` as rr_serve's. */
  serve(fd: number, buf: Uint8Array, request: number, response: Uint8Array, sliceUs: number, to: LoopCounters, out: Float64Array): number;
  /** Ping-pong with one request in flight for `sliceUs`; `out` as rr_client's. */
  client(fd: number, buf: Uint8Array, request: Uint8Array, response: number, sliceUs: number, to: LoopCounters, out: Float64Array): number;
  /** TCP_CRR transactions to `sockaddr` (sockaddr.ts's encoding) for `sliceUs`, each wait bounded by `bounds` (struct timeval); `out` as crr_client's. */
  crrClient(af: number, sockaddr: Uint8Array, bounds: BigInt64Array, request: Uint8Array, response: number, buf: Uint8Array, sliceUs: number, to: LoopCounters, out: Float64Array): number;
  /** Accepts and serves TCP_CRR connections on a blocking listener for `sliceUs`; `out` as crr_serve's. */
  crrServe(listener: number, buf: Uint8Array, request: number, response: Uint8Array, sliceUs: number, to: LoopCounters, out: Float64Array): number;
  /** The loops' clock, µs. */
  nowUs(): number;
}

/** rr-loops.c's S_* order. */
const SLOTS = Int32Array.from([Slot.transactions, Slot.bytes, Slot.latencySumUs, Slot.latencyMinUs, Slot.latencyMaxUs, Slot.connections, Slot.closed, Slot.sendErrors, Slot.timed, Slot.latencySqSumUs]);

/** A stream's block of the counters, as one pointer (the block's views are made once per stream). */
const blocks = new WeakMap<LoopCounters, Float64Array>();
const blockOf = (to: LoopCounters): Float64Array => {
  let b = blocks.get(to);
  if (!b) blocks.set(to, (b = to.c.subarray(to.o, to.o + SLOTS_PER_STREAM)));
  return b;
};

let loaded: Promise<(() => RrLoops | undefined) | undefined> | undefined;

/** The loops' compiler for this thread: call it when a loop is first wanted (the compile takes a few ms). */
export function loadRrLoops(): Promise<(() => RrLoops | undefined) | undefined> {
  loaded ??= open();
  return loaded;
}

async function open(): Promise<(() => RrLoops | undefined) | undefined> {
  if (typeof Bun === "undefined" || process.platform !== "linux" || process.env.ANYPERF_NO_C_LOOPS) return undefined;
  try {
    const { cc } = await import("bun:ffi");
    const { default: embedded } = await import("./rr-loops.c", { with: { type: "file" } });
    const text = await Bun.file(embedded).text();
    let compiled: RrLoops | null | undefined;
    return () => {
      if (compiled === undefined) {
        // TinyCC opens the source by its path, which a compiled binary's embedded file does not have: a private copy.
        const dir = mkdtempSync(join(tmpdir(), "anyperf-cc-"));
        try {
          const source = join(dir, "rr-loops.c");
          writeFileSync(source, text, { mode: 0o600 });
          const { symbols: c } = cc({
            source,
            symbols: {
              rr_serve: { args: ["i32", "ptr", "i64", "i64", "ptr", "i64", "f64", "ptr", "ptr", "ptr"], returns: "i32" },
              rr_client: { args: ["i32", "ptr", "i64", "ptr", "i64", "i64", "f64", "ptr", "ptr", "ptr", "ptr"], returns: "i32" },
              crr_client: { args: ["i32", "ptr", "i64", "ptr", "ptr", "i64", "i64", "ptr", "i64", "f64", "ptr", "ptr", "ptr", "ptr"], returns: "i32" },
              crr_serve: { args: ["i32", "ptr", "i64", "i64", "ptr", "i64", "f64", "ptr", "ptr", "ptr"], returns: "i32" },
              rr_now_us: { args: [], returns: "f64" },
            },
          });
          compiled = {
            serve: (fd, buf, request, response, sliceUs, to, out) => c.rr_serve(fd, buf, buf.byteLength, request, response, response.byteLength, sliceUs, blockOf(to), SLOTS, out),
            client: (fd, buf, request, response, sliceUs, to, out) =>
              c.rr_client(fd, buf, buf.byteLength, request, request.byteLength, response, sliceUs, blockOf(to), SLOTS, to.hist, out),
            crrClient: (af, sockaddr, bounds, request, response, buf, sliceUs, to, out) =>
              c.crr_client(af, sockaddr, sockaddr.byteLength, bounds, request, request.byteLength, response, buf, buf.byteLength, sliceUs, blockOf(to), SLOTS, to.hist, out),
            crrServe: (listener, buf, request, response, sliceUs, to, out) => c.crr_serve(listener, buf, buf.byteLength, request, response, response.byteLength, sliceUs, blockOf(to), SLOTS, out),
            nowUs: () => c.rr_now_us(),
          };
        } catch {
          compiled = null;
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      }
      return compiled ?? undefined;
    };
  } catch {
    return undefined;
  }
}
