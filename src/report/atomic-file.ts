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
import { accessSync, appendFileSync, closeSync, constants, copyFileSync, existsSync, lstatSync, openSync, realpathSync, renameSync, rmSync, statSync, writeFileSync, type Stats } from "node:fs";
import { basename, dirname, join } from "node:path";
import { UserError } from "../errors.ts";
import { outputDead, outputFailed } from "../output-failure.ts";

let serial = 0;

/** A temp name in the target's directory (rename needs the same filesystem), unique per process and write. */
function tempBeside(path: string): string {
  serial += 1;
  return join(dirname(path), `.${basename(path)}.anyperf-${process.pid}-${serial}.tmp`);
}

/** stat/lstat, undefined when nothing is there (also when a parent is not a directory: ENOTDIR). */
function statOf(path: string, link: boolean): Stats | undefined {
  try {
    return link ? lstatSync(path) : statSync(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw e;
  }
}

/** Where to write, and whether temp + rename can be used there. */
function resolveTarget(path: string): { path: string; replaceable: boolean } {
  const l = statOf(path, true);
  if (l === undefined || l.isFile()) return { path, replaceable: true };
  // A dangling link is written through: creating its target is what the peers' fopen() does.
  if (l.isSymbolicLink() && statOf(path, false)?.isFile()) return { path: realpathSync(path), replaceable: true };
  return { path, replaceable: false };
}

/**
 * Checks, before a test starts, that `path` can be written the way this module writes it: a run that measured for
 * minutes must not lose its results to a typo in a directory name. A regular file (or a name not yet taken) needs
 * its directory to exist and take a new file (a probe file is created and removed: it also catches a read-only
 * filesystem and a full inode table); a device or FIFO must be writable itself. `flag` is the user's spelling
 * (`--csv`, `-j`), named in the one-line error with the fix.
 */
export function checkOutputPath(flag: string, path: string, exitCode = 1): void {
  const fail = (cause: string, fix: string) => new UserError(`${flag} ${path}: ${cause}; ${fix}`, exitCode);
  try {
    checkPath(flag, path, fail);
  } catch (e) {
    if (e instanceof UserError) throw e;
    // A name the filesystem refuses to look up (ENAMETOOLONG, ELOOP, EACCES on a parent): found by the argv fuzzer.
    throw fail(`cannot be used (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`, "pass another path");
  }
}

function checkPath(flag: string, path: string, fail: (cause: string, fix: string) => UserError): void {
  // An empty name is a usage error (exit 2) wherever the flag is.
  if (path === "") throw new UserError(`${flag} '': empty file name; pass a file name after ${flag}`, 2);
  if (statOf(path, false)?.isDirectory()) throw fail("is a directory", "pass a file name inside it");
  const t = resolveTarget(path);
  if (!t.replaceable) {
    try {
      accessSync(t.path, constants.W_OK);
    } catch (e) {
      throw fail(`cannot be written (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`, "pass a path you may write");
    }
    return;
  }
  const dir = dirname(t.path);
  const d = statOf(dir, false);
  if (d === undefined) throw fail(`directory ${dir} does not exist`, `create it first (mkdir -p ${dir}) or pass a path in an existing directory`);
  if (!d.isDirectory()) throw fail(`${dir} is not a directory`, "pass a path in an existing directory");
  const probe = tempBeside(t.path);
  try {
    closeSync(openSync(probe, "wx"));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
    const why = code === "EACCES" || code === "EPERM" ? "permission denied" : code === "EROFS" ? "read-only filesystem" : code === "ENOSPC" || code === "EDQUOT" ? "no space left" : code;
    throw fail(`cannot create a file in ${dir} (${why})`, "pass a path in a directory you may write");
  } finally {
    rmSync(probe, { force: true });
  }
}

/**
 * Runs a write of a file checked by checkOutputPath earlier (results after a test, a pid file): a failure now (disk
 * full, the directory removed meanwhile) is one line naming the flag, not a stack after the console report.
 */
export function saveOutput(flag: string, path: string, write: () => void): void {
  try {
    write();
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
    throw new UserError(`${flag} ${path}: cannot write it (${code}); free space or pass another path`, 1);
  }
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
  private readonly what: string;

  /**
   * `flag`: the user's flag for the file, named when a write fails (src/output-failure.ts: one line, the run stops).
   * `fresh`: start the file anew (ntttcp -O) instead of appending to what it held (iperf3 --logfile, iperf -o).
   * The file is created now, as the peers open theirs at start, so a path that cannot be written fails here (the
   * caller turns that into its one-line error) rather than at the first report.
   */
  constructor(readonly path: string, opts: { flag: string; fresh?: boolean }) {
    this.what = `${opts.flag} ${path}`;
    const t = resolveTarget(path);
    if (!existsSync(t.path) || (opts.fresh && t.replaceable)) writeFileAtomic(t.path, "");
    else accessSync(t.replaceable ? dirname(t.path) : t.path, constants.W_OK);
    if (!exitHook) {
      exitHook = true;
      process.on("exit", () => {
        for (const log of open) log.flush();
      });
    }
  }

  append(text: string): void {
    if (text === "" || outputDead(this.what)) return;
    this.pending += text;
    open.add(this);
    if (this.scheduled) return;
    this.scheduled = true;
    queueMicrotask(() => this.flush());
  }

  /** Publishes what was appended so far (callers flush before printing a final report or exiting). */
  flush(): void {
    this.scheduled = false;
    const text = this.pending;
    this.pending = "";
    open.delete(this);
    if (text === "" || outputDead(this.what)) return;
    try {
      appendFileAtomic(this.path, text);
    } catch (e) {
      // A full disk or a FIFO whose reader left: one line naming the flag, and the run stops (its other outputs stay).
      outputFailed(this.what, e);
    }
  }
}
