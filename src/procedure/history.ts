import { appendFileSync, closeSync, existsSync, fstatSync, mkdirSync, openSync, readFileSync, readSync } from "node:fs";
import { dirname } from "node:path";
import { randomBytes } from "node:crypto";
import { z } from "zod";
import { outputDead, outputFailed } from "../output-failure.ts";
import { UserError } from "../errors.ts";
import { Figures } from "../report/result.ts";
import { Headline } from "./headline.ts";
import { HostFacts } from "./host-facts.ts";
import { RunDetail } from "./run-detail.ts";
import { Responsiveness } from "../native/responsiveness-report.ts";

/**
 * One line of the history file: one measured run. Version 2 adds `detail` (per-stream throughput over time, CPU per
 * core, the diagnosis: what the report draws per run). Older lines still read: version 1 lacks `detail`, and a line
 * without `v` (or v 0, before host facts and the sweep point were kept) gets every field added since as a default.
 * Version 3 adds `--responsiveness` runs: test `responsiveness`, their phases in `responsiveness` (no summary, no detail).
 */
export const HISTORY_VERSION = 3;
export const HistoryEntry = z.object({
  v: z.number().int().default(0),
  id: z.string(),
  time: z.string(),
  argv: z.array(z.string()).default([]),
  mode: z.string(),
  peer: z.string().optional(),
  transport: z.enum(["tcp", "udp"]).optional(),
  test: z.enum(["stream", "rr", "crr", "responsiveness"]).default("stream"),
  /** The runs of one invocation share a group; `repeat` is this run's 1-based index in its point. */
  group: z.string().optional(),
  point: z.record(z.string(), z.string()).default({}),
  repeat: z.number().int().optional(),
  host: HostFacts.default({ sysctls: {} }),
  results: Headline,
  summary: Figures.optional(),
  detail: RunDetail.optional(),
  responsiveness: Responsiveness.optional(),
  interrupted: z.boolean().default(false),
  errors: z.array(z.string()).default([]),
});
export type HistoryEntry = z.infer<typeof HistoryEntry>;
export type HistoryEntryInput = z.input<typeof HistoryEntry>;

export function newId(): string {
  return randomBytes(4).toString("hex");
}

/** `--history ''`: a usage error wherever the flag is read (runs, history, compare, report). */
export function emptyHistoryPath(): UserError {
  return new UserError("--history '': empty file name; pass a file name after --history, or --no-history", 2);
}

/** Fails before the test when the file cannot be created or appended to (the flag is the user's). */
export function checkHistoryPath(path: string): void {
  try {
    mkdirSync(dirname(path), { recursive: true });
    appendFileSync(path, "");
  } catch (e) {
    throw new UserError(`--history ${path}: cannot write it (${(e as NodeJS.ErrnoException).code ?? e}); pass a writable file or --no-history`, 1);
  }
}

/**
 * Appends one entry as one line: one appendFileSync of the whole line is one write() on an O_APPEND descriptor, so
 * another writer's line never lands inside it and a process killed between runs leaves whole lines (tested with
 * SIGKILL). Lines stay small (run-detail.ts bounds what they hold of the intervals and streams). The kernel copies a write page by page and stops early for
 * a fatal signal, so a line crossing a page boundary can still be cut in the one instant between two pages: a file
 * not ending in a newline gets one first, and the reader passes over such a fragment.
 */
export function appendHistory(path: string, entry: HistoryEntryInput): void {
  const line = JSON.stringify(HistoryEntry.parse(entry)) + "\n";
  const what = `--history ${path}`;
  if (outputDead(what)) return;
  try {
    mkdirSync(dirname(path), { recursive: true });
    appendFileSync(path, (endsCut(path) ? "\n" : "") + line);
  } catch (e) {
    // After the test: the results still print; one line names the file, and the exit code says it was not kept.
    outputFailed(what, e);
  }
}

function endsCut(path: string): boolean {
  let fd;
  try {
    fd = openSync(path, "r");
  } catch {
    return false;
  }
  try {
    const size = fstatSync(fd).size;
    if (size === 0) return false;
    const last = Buffer.alloc(1);
    readSync(fd, last, 0, 1, size - 1);
    return last[0] !== 0x0a;
  } finally {
    closeSync(fd);
  }
}

/**
 * Every entry of the file, oldest first. A line still being written (no newline yet) and a fragment a killed writer
 * left (not JSON) are passed over and counted in `cut`; a JSON line that is not an entry is named, with the fix.
 */
export function readHistory(path: string): HistoryEntry[] & { cut?: number } {
  if (path === "") throw emptyHistoryPath();
  if (!existsSync(path)) throw new UserError(`history ${path}: no such file; run a test first, or pass --history FILE`, 1);
  const out: HistoryEntry[] & { cut?: number } = [];
  const lines = readFileSync(path, "utf8").split("\n");
  lines.pop();
  lines.forEach((line, i) => {
    if (line.trim() === "") return;
    let json;
    try {
      json = JSON.parse(line);
    } catch {
      out.cut = (out.cut ?? 0) + 1;
      return;
    }
    const parsed = HistoryEntry.safeParse(json);
    if (!parsed.success) throw new UserError(`history ${path}:${i + 1}: not a history line; remove that line or pass another --history FILE`, 1);
    out.push(parsed.data);
  });
  return out;
}
