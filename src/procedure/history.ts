import { appendFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname } from "node:path";
import { randomBytes } from "node:crypto";
import { z } from "zod";
import { UserError } from "../errors.ts";
import { Figures } from "../report/result.ts";
import { Headline } from "./headline.ts";
import { HostFacts } from "./host-facts.ts";

/**
 * One line of the history file: one measured run. Version 1; a line without `v` (or v 0, before host facts and the
 * sweep point were kept) still reads: every field added since has a default.
 */
export const HISTORY_VERSION = 1;
export const HistoryEntry = z.object({
  v: z.number().int().default(0),
  id: z.string(),
  time: z.string(),
  argv: z.array(z.string()).default([]),
  mode: z.string(),
  peer: z.string().optional(),
  transport: z.enum(["tcp", "udp"]).optional(),
  test: z.enum(["stream", "rr", "crr"]).default("stream"),
  /** The runs of one invocation share a group; `repeat` is this run's 1-based index in its point. */
  group: z.string().optional(),
  point: z.record(z.string(), z.string()).default({}),
  repeat: z.number().int().optional(),
  host: HostFacts.default({ sysctls: {} }),
  results: Headline,
  summary: Figures.optional(),
  interrupted: z.boolean().default(false),
  errors: z.array(z.string()).default([]),
});
export type HistoryEntry = z.infer<typeof HistoryEntry>;
export type HistoryEntryInput = z.input<typeof HistoryEntry>;

export function newId(): string {
  return randomBytes(4).toString("hex");
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
 * Appends one entry as one line. One appendFileSync of the whole line is one write() on an O_APPEND descriptor: the
 * kernel places it at the end as a unit, so another writer's line never lands inside it and a process killed
 * between two runs leaves whole lines only (tested with SIGKILL). Lines stay small (no intervals, no streams).
 */
export function appendHistory(path: string, entry: HistoryEntryInput): void {
  mkdirSync(dirname(path), { recursive: true });
  appendFileSync(path, JSON.stringify(HistoryEntry.parse(entry)) + "\n");
}

/** Every entry of the file, oldest first. A line that does not parse (edited by hand, another tool's) is named. */
export function readHistory(path: string): HistoryEntry[] {
  if (!existsSync(path)) throw new UserError(`history ${path}: no such file; run a test first, or pass --history FILE`, 1);
  const out: HistoryEntry[] = [];
  readFileSync(path, "utf8").split("\n").forEach((line, i) => {
    if (line.trim() === "") return;
    let parsed;
    try {
      parsed = HistoryEntry.safeParse(JSON.parse(line));
    } catch {
      parsed = undefined;
    }
    if (!parsed?.success) throw new UserError(`history ${path}:${i + 1}: not a history line; remove that line or pass another --history FILE`, 1);
    out.push(parsed.data);
  });
  return out;
}
