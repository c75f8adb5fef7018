/**
 * Output files that a reader (or a kill) never catches half-written. Every result and log file of every mode goes
 * through here: a whole file is written to a temporary file beside the target and renamed over it; a log that the
 * peer tool appends to (iperf3 --logfile, iperf 2 -o, ntttcp -O, Windows ntttcp -xml) is published in whole blocks,
 * each time as "what the file holds now + the new block", by the same temp + rename. rename(2) within one
 * directory replaces the name atomically, so a reader sees the old file or the new one, and a process killed at any
 * point leaves the last published file intact (at worst a stray temp file if it was SIGKILLed mid-write).
 *
 * A path that exists and is not a regular file (/dev/stdout, a FIFO, a terminal) cannot be replaced: it is written
 * straight through, as the peers do. A symlink to a regular file is followed, so the link stays a link.
 *
 * Sync on purpose: callers publish from report code that must keep lines in order across tests and exits, and a
 * signal handler runs only between these calls, never in the middle of one.
 *
 * Cost: publishing a log block copies the log (copy_file_range, in the kernel), so a log of L bytes costs O(L) per
 * block; blocks are coalesced per event-loop turn, which keeps that to a few copies per report interval.
 * A consequence of replacing the file: `tail -f` keeps reading the old inode; follow such a log with `tail -F`.
 */
import { accessSync, appendFileSync, constants, copyFileSync, existsSync, lstatSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";

let serial = 0;

/** A temp name in the target's directory (rename needs the same filesystem), unique per process and write. */
function tempBeside(path: string): string {
  serial += 1;
  return join(dirname(path), `.${basename(path)}.anyperf-${process.pid}-${serial}.tmp`);
}

/** Where to write, and whether temp + rename can be used there. */
function resolveTarget(path: string): { path: string; replaceable: boolean } {
  const l = lstatSync(path, { throwIfNoEntry: false });
  if (l === undefined || l.isFile()) return { path, replaceable: true };
  // A dangling link is written through: creating its target is what the peers' fopen() does.
  if (l.isSymbolicLink() && statSync(path, { throwIfNoEntry: false })?.isFile()) return { path: realpathSync(path), replaceable: true };
  return { path, replaceable: false };
}

/** Writes `tmp` with `fill`, renames it over `target`; the temp file is removed if anything fails. */
function publish(target: string, fill: (tmp: string) => void): void {
  const tmp = tempBeside(target);
  try {
    fill(tmp);
    renameSync(tmp, target);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}

/** Replaces `path` by `data` whole (results: --json, --csv, -x, -j, a pid file). */
export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  const t = resolveTarget(path);
  if (!t.replaceable) return void writeFileSync(t.path, data);
  publish(t.path, (tmp) => writeFileSync(tmp, data));
}

/** Appends `block` to `path` as one unit: a reader sees the file without it or with all of it. */
export function appendFileAtomic(path: string, block: string | Uint8Array): void {
  const t = resolveTarget(path);
  if (!t.replaceable) return void appendFileSync(t.path, block);
  publish(t.path, (tmp) => {
    // copyFileSync keeps the file's mode; a file that did not exist yet is created with the usual umask.
    if (existsSync(t.path)) copyFileSync(t.path, tmp);
    appendFileSync(tmp, block);
  });
}

/** Every log still holding unpublished text; flushed on exit, including process.exit() from a second Ctrl+C. */
const open = new Set<AppendLog>();
let exitHook = false;

/**
 * A log the peer tool appends to. append() collects text; everything appended in one event-loop turn (a report
 * block: an interval's lines, a summary, a JSON document) is published together by appendFileAtomic at the end of
 * the turn, so the file shows each block promptly and never part of one.
 */
export class AppendLog {
  private pending = "";
  private scheduled = false;

  /**
   * `fresh`: start the file anew (ntttcp -O) instead of appending to what it held (iperf3 --logfile, iperf -o).
   * The file is created now, as the peers open theirs at start, so a path that cannot be written fails here (the
   * caller turns that into its one-line error) rather than at the first report.
   */
  constructor(readonly path: string, opts: { fresh?: boolean } = {}) {
    const t = resolveTarget(path);
    if (!existsSync(t.path) || (opts.fresh && t.replaceable)) writeFileAtomic(t.path, "");
    else accessSync(t.replaceable ? dirname(t.path) : t.path, constants.W_OK);
    if (!exitHook) {
      exitHook = true;
      process.on("exit", () => {
        for (const log of open) log.flushOrWarn();
      });
    }
  }

  append(text: string): void {
    if (text === "") return;
    this.pending += text;
    open.add(this);
    if (this.scheduled) return;
    this.scheduled = true;
    queueMicrotask(() => this.flushOrWarn());
  }

  /** Outside the caller's stack (end of turn, exit) a failure is reported and the text kept for the next try. */
  private flushOrWarn(): void {
    try {
      this.flush();
    } catch (e) {
      process.stderr.write(`anyperf: cannot write ${this.path}: ${(e as Error).message}\n`);
    }
  }

  /** Publishes what was appended so far (callers flush before printing a final report or exiting). */
  flush(): void {
    this.scheduled = false;
    if (this.pending !== "") appendFileAtomic(this.path, this.pending);
    this.pending = "";
    open.delete(this);
  }
}
