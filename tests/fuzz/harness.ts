/**
 * Shared machinery of the fuzz suites (tests/fuzz/*.targets.ts), run inside a watchdog Worker by runner.ts:
 *  - budget and seed from the environment (FUZZ_RUNS, FUZZ_SEED, FUZZ_PATH, FUZZ_CALL_MS);
 *  - `bounded()`: every call into a decoder or session is timed and the memory it commits is measured, so a loop
 *    or an allocation sized by a hostile length field fails the property instead of passing silently;
 *  - `typed()`: a call ends in a value or in one of the module's own error classes, anything else fails;
 *  - arbitraries: captured bytes mutated (bit flips, extreme words in length fields, truncation, inserted, deleted
 *    and repeated bytes), JSON documents edited at the value level, and random chunkings for push parsers.
 */
import { heapSize, memoryUsage } from "bun:jsc";
import fc from "fast-check";
import { concatBytes } from "../../lib/bytes.ts";

function envNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name}=${raw} is not a non-negative number`);
  return n;
}

/** Cases per target. The default keeps every fuzz file together well under a minute in CI. */
export const FUZZ_RUNS = Math.max(1, Math.floor(envNumber("FUZZ_RUNS", 300)));
/** A call that returns later than this fails its case (a hang is caught by the runner's watchdog instead). */
export const CALL_LIMIT_MS = envNumber("FUZZ_CALL_MS", 1000);
/** No single call on a fuzz input may commit this much memory: every input here is far below a megabyte. */
export const CALL_MEMORY_LIMIT = 64 * 1024 * 1024;

/** Fixed per target unless FUZZ_SEED is set, so CI is reproducible; scripts/fuzz passes a fresh one each run. */
export function seedFor(target: string): number {
  const fixed = process.env.FUZZ_SEED;
  if (fixed !== undefined && fixed !== "") return Number(fixed) | 0;
  let h = 0x811c9dc5;
  for (let i = 0; i < target.length; i++) h = Math.imul(h ^ target.charCodeAt(i), 0x01000193);
  return h | 0;
}

// ---------------------------------------------------------------------------------------------------------------
// Watch: a SharedArrayBuffer the runner polls. [0] = Date.now() when the outermost bounded call started (0 when
// idle), [1] = property executions started so far (generation, then shrinking).

let watch: Float64Array | undefined;
let depth = 0;

export function armWatch(shared: SharedArrayBuffer): void {
  watch = new Float64Array(shared);
}

export const WATCH_SLOTS = 2;

export class BoundError extends Error {
  override name = "BoundError";
  constructor(
    message: string,
    readonly kind: "time" | "memory" = "time",
  ) {
    super(message);
  }
}

export class UntypedError extends Error {
  override name = "UntypedError";
}

/** One whole case (a session driven through many calls, a decoder fed byte by byte) gets this long. */
export const RUN_LIMIT_MS = 10 * CALL_LIMIT_MS;

/**
 * Runs `fn`, failing when it takes longer than `limitMs` or, for the outermost call, commits more than
 * CALL_MEMORY_LIMIT (memory is measured once per case: the peak covers every nested call).
 */
export function bounded<T>(what: string, fn: () => T, limitMs = CALL_LIMIT_MS): T {
  const outer = depth === 0;
  if (outer && watch) watch[0] = Date.now();
  depth++;
  const m0 = outer ? { ...memoryUsage(), heap: heapSize() } : undefined;
  const t0 = performance.now();
  let ok = false;
  try {
    const out = fn();
    ok = true;
    return out;
  } finally {
    depth--;
    if (outer && watch) watch[0] = 0;
    const ms = performance.now() - t0;
    // Thrown from finally on purpose: an over-budget call fails even when it also threw a typed error.
    if (ms > limitMs) throw new BoundError(`${what} took ${ms.toFixed(0)} ms (limit ${limitMs} ms)${ok ? "" : " and threw"}`);
    if (m0) checkMemory(what, m0);
  }
}

const MiB = 2 ** 20;

/**
 * The heap itself grows in steps of tens of MiB between collections, so growth past the limit is judged after a
 * full collection: what the call still holds, or a transient peak far beyond any heap step (a buffer sized by a
 * hostile length field: 0x7fffffff, 0xffffffff).
 */
function checkMemory(what: string, m0: ReturnType<typeof memoryUsage> & { heap: number }): void {
  const m1 = memoryUsage();
  const peak = m1.peakCommit - m0.peakCommit;
  if (Math.max(m1.currentCommit - m0.currentCommit, peak) <= CALL_MEMORY_LIMIT) return;
  Bun.gc(true);
  // Committed memory is the whole process's: JIT compiler threads add code and scratch space while a case runs. What
  // this call holds must also be in the JS heap after the collection (objects and the buffers they keep alive).
  const held = Math.min(memoryUsage().currentCommit - m0.currentCommit, heapSize() - m0.heap);
  if (held > CALL_MEMORY_LIMIT) throw new BoundError(`${what} holds ${(held / MiB).toFixed(0)} MiB after a full GC (limit ${CALL_MEMORY_LIMIT / MiB} MiB)`, "memory");
  if (peak > 8 * CALL_MEMORY_LIMIT) throw new BoundError(`${what} committed ${(peak / MiB).toFixed(0)} MiB at its peak (limit ${(8 * CALL_MEMORY_LIMIT) / MiB} MiB)`, "memory");
}

/** `bounded` for promises: the time bound covers the wait for the answer as well. */
export async function boundedAsync<T>(what: string, fn: () => Promise<T>, limitMs = CALL_LIMIT_MS): Promise<T> {
  const t0 = performance.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new BoundError(`${what} did not answer within ${limitMs} ms`)), limitMs);
  });
  try {
    return await Promise.race([bounded(what, fn), late]);
  } finally {
    clearTimeout(timer);
    const ms = performance.now() - t0;
    if (ms > limitMs) throw new BoundError(`${what} took ${ms.toFixed(0)} ms (limit ${limitMs} ms)`);
  }
}

/** Any error class, abstract or not, for instanceof checks. */
export type ErrorClass = abstract new (...args: never[]) => Error;

export type Outcome<T> = { ok: true; value: T } | { ok: false; error: Error };

function describeThrown(e: unknown): string {
  if (e instanceof Error) return `${e.name}: ${e.message}\n${e.stack ?? ""}`;
  return `a non-Error value: ${String(e)}`;
}

/** The call's value, or the error it threw when that is an instance of one of `allowed`; anything else fails. */
export function typed<T>(what: string, fn: () => T, ...allowed: ErrorClass[]): Outcome<T> {
  return classify(what, () => bounded(what, fn), ...allowed);
}

/** `typed` without its own bound, for calls inside an enclosing `bounded` (per-call bookkeeping costs µs). */
export function classify<T>(what: string, fn: () => T, ...allowed: ErrorClass[]): Outcome<T> {
  try {
    return { ok: true, value: fn() };
  } catch (e) {
    if (e instanceof BoundError || e instanceof UntypedError) throw e;
    if (e instanceof Error && allowed.some((c) => e instanceof c)) return { ok: false, error: e };
    throw new UntypedError(`${what} threw ${describeThrown(e)}`);
  }
}

/** For session entry points, which own their errors: nothing may escape. */
export function quiet<T>(what: string, fn: () => T): T {
  const r = typed(what, fn);
  if (!r.ok) throw r.error;
  return r.value;
}

export function fail(message: string): never {
  throw new Error(message);
}

export function check(condition: boolean, message: string | (() => string)): asserts condition {
  if (!condition) fail(typeof message === "string" ? message : message());
}

// ---------------------------------------------------------------------------------------------------------------
// Byte mutations of captured inputs.

/**
 * Values that break length and count fields: zero, sign bits, all ones, just past 16/24/32-bit limits; and the
 * float32 specials (+/-Infinity, NaN, largest finite) for fields that travel as floats.
 */
export const EXTREME_WORDS = [
  0, 1, 2, 0x7f, 0x80, 0xff, 0x100, 0x7fff, 0x8000, 0xffff, 0x10000, 0xffffff, 0x1000000, 0x7ffffffe, 0x7fffffff,
  0x80000000, 0x80000001, 0xfffffffe, 0xffffffff, 0x7f800000, 0xff800000, 0x7fc00000, 0x7f7fffff,
] as const;

export type Mutation =
  | { kind: "flip"; at: number; bit: number }
  | { kind: "byte"; at: number; value: number }
  /** A 32-bit word (length, count, flags) set to an extreme value at any offset, either byte order. */
  | { kind: "word"; at: number; value: number; littleEndian: boolean }
  | { kind: "truncate"; at: number }
  | { kind: "insert"; at: number; bytes: Uint8Array }
  | { kind: "delete"; at: number; length: number }
  | { kind: "repeat"; at: number; length: number; times: number };

const position = fc.nat({ max: 0xffff });

export const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("flip" as const), at: position, bit: fc.nat({ max: 7 }) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("byte" as const),
      at: position,
      value: fc.oneof(fc.constantFrom(0, 1, 0x7f, 0x80, 0xfe, 0xff), fc.nat({ max: 255 })),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("word" as const),
      at: position,
      value: fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...EXTREME_WORDS) }, fc.nat({ max: 0xffffffff })),
      littleEndian: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("truncate" as const), at: position }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("insert" as const), at: position, bytes: fc.uint8Array({ minLength: 1, maxLength: 16 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("delete" as const), at: position, length: fc.integer({ min: 1, max: 64 }) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("repeat" as const),
      at: position,
      length: fc.integer({ min: 1, max: 32 }),
      times: fc.integer({ min: 1, max: 16 }),
    }),
  },
);

export function mutate(base: Uint8Array, m: Mutation): Uint8Array {
  const n = base.length;
  switch (m.kind) {
    case "flip":
    case "byte": {
      if (n === 0) return base;
      const out = base.slice();
      const i = m.at % n;
      out[i] = m.kind === "flip" ? out[i]! ^ (1 << m.bit) : m.value;
      return out;
    }
    case "word": {
      if (n < 4) return base;
      const out = base.slice();
      new DataView(out.buffer).setUint32(m.at % (n - 3), m.value >>> 0, m.littleEndian);
      return out;
    }
    case "truncate":
      return base.slice(0, m.at % (n + 1));
    case "insert": {
      const i = m.at % (n + 1);
      return concatBytes([base.subarray(0, i), m.bytes, base.subarray(i)]);
    }
    case "delete": {
      const i = m.at % (n + 1);
      return concatBytes([base.subarray(0, i), base.subarray(i + m.length)]);
    }
    case "repeat": {
      const i = m.at % (n + 1);
      const piece = base.subarray(i, i + m.length);
      return concatBytes([base.subarray(0, i), ...Array.from({ length: m.times + 1 }, () => piece), base.subarray(i + piece.length)]);
    }
  }
}

/** One of `seeds` with one to `maxMutations` mutations applied in order (shrinks toward fewer mutations). */
export function mutated(seeds: readonly Uint8Array[], maxMutations = 8): fc.Arbitrary<Uint8Array> {
  if (seeds.length === 0) throw new Error("mutated() needs at least one seed input");
  return fc
    .tuple(fc.nat({ max: seeds.length - 1 }), fc.array(mutationArb, { minLength: 1, maxLength: maxMutations }))
    .map(([i, ms]) => ms.reduce((b, m) => mutate(b, m), seeds[i]!));
}

/** Mostly mutated captures, some pristine ones, some plain random bytes. */
export function fuzzBytes(seeds: readonly Uint8Array[], opts: { maxRandom?: number; maxMutations?: number } = {}): fc.Arbitrary<Uint8Array> {
  return fc.oneof(
    { weight: 6, arbitrary: mutated(seeds, opts.maxMutations) },
    { weight: 1, arbitrary: fc.constantFrom(...seeds) },
    { weight: 2, arbitrary: fc.uint8Array({ maxLength: opts.maxRandom ?? 512 }) },
  );
}

/** Exactly `size` bytes: a seed or random bytes, mutated in place only (for fixed-size messages and datagrams). */
export function fixedSize(seeds: readonly Uint8Array[], size: number): fc.Arbitrary<Uint8Array> {
  const fit = (b: Uint8Array): Uint8Array => {
    const out = new Uint8Array(size);
    out.set(b.subarray(0, size));
    return out;
  };
  const inPlace = fc.oneof(
    fc.record({ kind: fc.constant("flip" as const), at: position, bit: fc.nat({ max: 7 }) }),
    fc.record({ kind: fc.constant("byte" as const), at: position, value: fc.nat({ max: 255 }) }),
    fc.record({
      kind: fc.constant("word" as const),
      at: position,
      value: fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...EXTREME_WORDS) }, fc.nat({ max: 0xffffffff })),
      littleEndian: fc.boolean(),
    }),
  );
  return fc.oneof(
    { weight: 6, arbitrary: fc.tuple(fc.constantFrom(...seeds), fc.array(inPlace, { minLength: 1, maxLength: 12 })).map(([s, ms]) => ms.reduce((b, m) => mutate(b, m), fit(s))) },
    { weight: 1, arbitrary: fc.constantFrom(...seeds).map(fit) },
    { weight: 2, arbitrary: fc.uint8Array({ minLength: size, maxLength: size }) },
  );
}

// ---------------------------------------------------------------------------------------------------------------
// Chunking for push parsers.

/** Cut points (taken modulo the input length), or "bytewise": the worst split TCP can produce. */
export type Cuts = readonly number[] | "bytewise";

export const cutsArb: fc.Arbitrary<Cuts> = fc.oneof(
  { weight: 8, arbitrary: fc.array(fc.nat({ max: 0xffff }), { maxLength: 12 }) },
  { weight: 1, arbitrary: fc.constant("bytewise" as const) },
);

/** `bytes` as consecutive chunks (empty chunks included, as a socket may deliver them). */
export function chunk(bytes: Uint8Array, cuts: Cuts): Uint8Array[] {
  if (cuts === "bytewise") return Array.from(bytes, (_, i) => bytes.subarray(i, i + 1));
  const points = [...cuts.map((c) => c % (bytes.length + 1)), bytes.length].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let from = 0;
  for (const p of points) {
    out.push(bytes.subarray(from, p));
    from = p;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// JSON documents edited at the value level, so inputs get past JSON.parse and into the schemas.

/** Number spellings JSON.stringify never writes: overflow, -0, 2^64-1 as iperf3 3.12 prints -1, exponents. */
const RAW_NUMBERS = [
  "1e400", "-1e400", "-0", "0.0", "1e-400", "18446744073709551615", "18446744073709551616", "9223372036854775807",
  "9223372036854775808", "4294967295", "4294967296", "2147483648", "-2147483649", "9007199254740993", "0.5", "-1",
  "1E2", "123456789012345678901234567890",
] as const;

export const rawJsonValue: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...RAW_NUMBERS) },
  { weight: 2, arbitrary: fc.integer().map(String) },
  { weight: 1, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => JSON.stringify(d)) },
  { weight: 2, arbitrary: fc.constantFrom("true", "false", "null", "[]", "{}", '""', '"tcp"', '"udp"', "[1]", '{"a":1}') },
  { weight: 1, arbitrary: fc.string({ maxLength: 64 }).map((s) => JSON.stringify(s)) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 9000 }).map((n) => JSON.stringify("x".repeat(n))) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)) },
);

type JsonObject = { [key: string]: unknown };

export type JsonEdit =
  | { kind: "set"; key: string; value: string; append: boolean }
  | { kind: "delete"; index: number }
  /** Edits one element of an array-of-objects member (iperf3 "streams"), or copies it `copies` times. */
  | { kind: "element"; key: string; index: number; edits: JsonEdit[]; copies: number };

function editArb(keys: readonly string[], arrayKeys: readonly string[], depth: number): fc.Arbitrary<JsonEdit> {
  const key = keys.length > 0 ? fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...keys) }, fc.string({ maxLength: 12 })) : fc.string({ maxLength: 12 });
  const set = fc.record({ kind: fc.constant("set" as const), key, value: rawJsonValue, append: fc.boolean() });
  const del = fc.record({ kind: fc.constant("delete" as const), index: fc.nat({ max: 64 }) });
  if (depth === 0 || arrayKeys.length === 0) return fc.oneof({ weight: 3, arbitrary: set }, del);
  const element = fc.record({
    kind: fc.constant("element" as const),
    key: fc.constantFrom(...arrayKeys),
    index: fc.nat({ max: 8 }),
    edits: fc.array(editArb(keys, [], depth - 1), { maxLength: 4 }),
    copies: fc.oneof({ weight: 4, arbitrary: fc.constant(0) }, fc.integer({ min: 1, max: 300 })),
  });
  return fc.oneof({ weight: 3, arbitrary: set }, del, element);
}

function entriesText(entries: ReadonlyArray<readonly [string, string]>): string {
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(",")}}`;
}

function applyEdits(doc: JsonObject, edits: readonly JsonEdit[]): string {
  const entries: Array<[string, string]> = Object.entries(doc).map(([k, v]) => [k, JSON.stringify(v)]);
  for (const e of edits) {
    if (e.kind === "delete") {
      if (entries.length > 0) entries.splice(e.index % entries.length, 1);
      continue;
    }
    const at = entries.findIndex(([k]) => k === e.key);
    if (e.kind === "set") {
      // Appending an existing key writes it twice: JSON.parse keeps the last, a C parser may keep the first.
      if (at < 0 || e.append) entries.push([e.key, e.value]);
      else entries[at] = [e.key, e.value];
      continue;
    }
    const arr = doc[e.key];
    if (at < 0 || !Array.isArray(arr) || arr.length === 0) continue;
    const elems = arr.map((x) => (x !== null && typeof x === "object" && !Array.isArray(x) ? applyEdits(x as JsonObject, []) : JSON.stringify(x)));
    const i = e.index % elems.length;
    const target = arr[i];
    if (target !== null && typeof target === "object" && !Array.isArray(target)) elems[i] = applyEdits(target as JsonObject, e.edits);
    for (let c = 0; c < e.copies; c++) elems.push(elems[i]!);
    entries[at] = [e.key, `[${elems.join(",")}]`];
  }
  return entriesText(entries);
}

/** JSON text: one of `seeds` (objects) with member edits; `knownKeys` are tried as new members too. */
export function editedJson(seeds: readonly JsonObject[], knownKeys: readonly string[] = []): fc.Arbitrary<string> {
  const keys = [...new Set([...seeds.flatMap((s) => Object.keys(s)), ...knownKeys])];
  const arrayKeys = [...new Set(seeds.flatMap((s) => Object.keys(s).filter((k) => Array.isArray(s[k]))))];
  return fc
    .tuple(fc.nat({ max: seeds.length - 1 }), fc.array(editArb(keys, arrayKeys, 1), { minLength: 1, maxLength: 8 }))
    .map(([i, edits]) => applyEdits(seeds[i]!, edits));
}

export const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);

// ---------------------------------------------------------------------------------------------------------------
// Targets: what a *.targets.ts module exports, run by worker.ts.

export interface RunOptions {
  target: string;
  runs: number;
  seed: number;
  path?: string;
}

export interface RunReport {
  failed: boolean;
  interrupted: boolean;
  numRuns: number;
  numShrinks: number;
  seed: number;
  path: string | null;
  message: string;
}

export interface FuzzTarget {
  run(options: RunOptions): Promise<RunReport>;
}

function started(): void {
  if (watch) watch[1] = watch[1]! + 1;
}

function params(o: RunOptions): fc.Parameters<unknown> {
  return { numRuns: o.runs, seed: o.seed, ...(o.path !== undefined ? { path: o.path } : {}) };
}

function toReport<T>(d: fc.RunDetails<T>, message: string | undefined): RunReport {
  const e = d.errorInstance;
  const cause = e instanceof Error ? `${e.name}: ${e.message}\n${e.stack ?? ""}` : e === null || e === undefined ? "" : String(e);
  return {
    failed: d.failed,
    interrupted: d.interrupted,
    numRuns: d.numRuns,
    numShrinks: d.numShrinks,
    seed: d.seed,
    path: d.counterexamplePath,
    message: `${message ?? ""}${cause ? `\n\nfirst failure of the shrunk case:\n${cause}` : ""}`,
  };
}

function isTimeBound(e: unknown): boolean {
  return e instanceof BoundError && e.kind === "time";
}

/**
 * A synchronous property: `body` throws to fail the case. Every body is deterministic in its input, so a case that
 * ran over a time bound is run once more: a slow path is slow again, a stall of a loaded machine is not.
 */
export function syncTarget<T>(arb: fc.Arbitrary<T>, body: (value: T) => void): FuzzTarget {
  return {
    async run(o) {
      const d = fc.check(
        fc.property(arb, (v) => {
          started();
          try {
            body(v);
          } catch (e) {
            if (!isTimeBound(e)) throw e;
            body(v);
          }
        }),
        params(o) as fc.Parameters<[T]>,
      );
      return toReport(d, fc.defaultReportMessage(d));
    },
  };
}

export function asyncTarget<T>(arb: fc.Arbitrary<T>, body: (value: T) => Promise<void>): FuzzTarget {
  return {
    async run(o) {
      const d = await fc.check(
        fc.asyncProperty(arb, async (v) => {
          started();
          try {
            await body(v);
          } catch (e) {
            if (!isTimeBound(e)) throw e;
            await body(v);
          }
        }),
        params(o) as fc.Parameters<[T]>,
      );
      return toReport(d, fc.defaultReportMessage(d));
    },
  };
}
