import { format } from "node:util";
import { endRun } from "./signals.ts";

/**
 * The run's output failing (`> /dev/full`, `| head -1`, stdout opened read-only, a log file on a full disk) ends
 * every mode cleanly.
 * Bun's console.log drops a failed write without a word, and process.stdout reports one as an 'error' event that,
 * unheard, prints a stack and leaves exit code 0: so every console call goes through the streams' write, and every
 * write carries a callback that hears its failure.
 *
 * - EPIPE (the reader left): the run stops quietly, as a Unix tool killed by SIGPIPE does (exit 141); the run's
 *   files (--history, -o, --csv, logs) are still written, as after Ctrl+C.
 * - Anything else (ENOSPC, EBADF, EIO): one line on stderr naming the stream (or the file and its flag) and the
 *   cause, the run stops, exit 1.
 *
 * Writes to a stream that failed are dropped from then on; pending writes are waited for before exit
 * (drainStdStreams), so a failure of the last report still decides the exit code. A log file (AppendLog) reports
 * its failure here too, named by its flag: "-o /dev/full".
 */
export type StdStream = "stdout" | "stderr";

const MEANING: Record<string, string> = {
  ENOSPC: "no space left on device",
  EDQUOT: "disk quota exceeded",
  EBADF: "not open for writing",
  EIO: "input/output error",
  EFBIG: "file too large",
  EROFS: "read-only filesystem",
  EINVAL: "does not take writes",
};

const dead = new Set<string>();
let first: { what: string; code: string } | undefined;
let pending = 0;
let idle: (() => void) | undefined;

function codeOf(err: unknown): string {
  return (err as { code?: unknown } | null)?.code?.toString() ?? (err instanceof Error ? err.message : String(err));
}

/**
 * The one line for a failed output: "anyperf: cannot write to stdout: no space left on device (ENOSPC); ...".
 * `what` is a stream, or a file as its flag and path ("-o /dev/full").
 */
export function outputFailureLine(what: string, code: string): string {
  const meaning = MEANING[code];
  const cause = meaning === undefined ? code : `${meaning} (${code})`;
  const fix = what === "stdout" || what === "stderr" ? "redirect it elsewhere" : "free space or pass another path";
  return `anyperf: cannot write ${what === "stdout" || what === "stderr" ? `to ${what}` : what}: ${cause}; the run was stopped: ${fix}`;
}

/** A write to `what` failed (a guarded stream, a mode writing the descriptor itself, a log file): ends the run. */
export function outputFailed(what: string, err: unknown): void {
  if (dead.has(what)) return;
  dead.add(what);
  const code = codeOf(err);
  first ??= { what, code };
  if (code !== "EPIPE" && !dead.has("stderr")) process.stderr.write(`${outputFailureLine(what, code)}\n`);
  // What the modes say while they wind down ("interrupted while connecting") follows from this stop: the one line
  // above (or, for EPIPE, silence) is the whole account.
  dead.add("stderr");
  endRun(code === "EPIPE" ? "SIGPIPE" : "SIGIO");
}

/** True once `what` failed: its writer drops further text. */
export function outputDead(what: string): boolean {
  return dead.has(what);
}

type WriteCallback = (err?: Error | null) => void;

function guard(stream: StdStream, s: NodeJS.WriteStream): void {
  const write = s.write.bind(s) as (chunk: string | Uint8Array, encoding: BufferEncoding | undefined, cb: WriteCallback) => boolean;
  s.on("error", (e: Error) => outputFailed(stream, e));
  s.write = ((chunk: string | Uint8Array, a?: BufferEncoding | WriteCallback, b?: WriteCallback): boolean => {
    const cb = typeof a === "function" ? a : b;
    if (dead.has(stream)) {
      cb?.();
      return true;
    }
    pending += 1;
    const done = (err?: Error | null) => {
      pending -= 1;
      if (err) outputFailed(stream, err);
      cb?.(err);
      if (pending === 0) idle?.();
    };
    try {
      return write(chunk, typeof a === "string" ? a : undefined, done);
    } catch (e) {
      // Deno's streams write stdout synchronously and throw.
      done(e as Error);
      return true;
    }
  }) as typeof s.write;
}

let installed = false;

/** Routes console output through the guarded streams; main.ts calls it once, first. */
export function guardStdStreams(): void {
  if (installed) return;
  installed = true;
  guard("stdout", process.stdout);
  guard("stderr", process.stderr);
  const out = (...args: unknown[]) => void process.stdout.write(`${format(...args)}\n`);
  const err = (...args: unknown[]) => void process.stderr.write(`${format(...args)}\n`);
  console.log = out;
  console.info = out;
  console.error = err;
  console.warn = err;
}

/** Waits (at most `boundMs`: a reader that never reads must not hold the exit forever) for pending writes. */
export async function drainStdStreams(boundMs = 5_000): Promise<void> {
  if (pending === 0) return;
  let timer: ReturnType<typeof setTimeout> | undefined;
  await new Promise<void>((resolve) => {
    idle = resolve;
    timer = setTimeout(resolve, boundMs);
  });
  clearTimeout(timer);
  idle = undefined;
}

/** The process's exit code: a failed output's (141 for EPIPE, 1 otherwise) over the mode's own. */
export function exitCodeAfterStreams(code: number): number {
  if (first === undefined) return code;
  return first.code === "EPIPE" ? 141 : code === 0 || code >= 128 ? 1 : code;
}
