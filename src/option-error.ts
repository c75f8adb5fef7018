import type { z } from "zod";
import { requirement } from "../lib/requirement.ts";
import { UserError } from "./errors.ts";

/**
 * A schema's verdict on a value the user gave, said in the user's terms: the flag as they typed it and the range it
 * takes, never the schema's field name (durationS, bufferBytes) nor zod's dump.
 */

function at(input: unknown, path: readonly PropertyKey[]): unknown {
  let v = input;
  for (const k of path) v = v !== null && typeof v === "object" ? (v as Record<PropertyKey, unknown>)[k] : undefined;
  return v;
}

/** The flag of a field: by its whole path ("amount.seconds"), then by shorter prefixes ("amount"), then its own name. */
function flagOf(path: readonly PropertyKey[], flags: Readonly<Record<string, string>>): { flag: string; key: string } | undefined {
  const names = path.map(String);
  for (let n = names.length; n > 0; n--) {
    const key = names.slice(0, n).join(".");
    if (flags[key] !== undefined) return { flag: flags[key], key };
  }
  const last = names.at(-1);
  return last !== undefined && flags[last] !== undefined ? { flag: flags[last], key: last } : undefined;
}

/**
 * The first issue whose field has a flag in `flags` (see flagOf), as one UserError:
 * "--time -5: must be above 0; see --help". `given` holds the text the user typed, when it differs from the parsed
 * value (-b 1G, not 1073741824). Undefined when no issue maps to a flag: the caller then has a field to add.
 */
export function optionError(
  error: z.ZodError,
  flags: Readonly<Record<string, string>>,
  opts: { input?: unknown; given?: Readonly<Record<string, string | undefined>>; exitCode?: number; help?: string } = {},
): UserError | undefined {
  for (const issue of error.issues) {
    // A refinement across fields carries its own sentence, written for the user ("--crr needs TCP: drop --udp").
    if (issue.code === "custom" && issue.path.length === 0) return new UserError(issue.message, opts.exitCode ?? 2);
    const found = flagOf(issue.path, flags);
    if (found === undefined) continue;
    const { flag, key } = found;
    const raw = opts.given?.[key] ?? at(opts.input, issue.path);
    const shown = raw === undefined || raw === null ? "" : ` ${raw === "" ? "''" : String(raw)}`;
    return new UserError(`${flag}${shown}: must be ${requirement(issue)}; ${opts.help ?? "see --help"}`, opts.exitCode ?? 2);
  }
  return undefined;
}

/** Recognises a ZodError without importing zod (main.ts stays light on start-up). */
export function isZodError(e: unknown): e is z.ZodError {
  return e instanceof Error && e.name === "ZodError" && Array.isArray((e as { issues?: unknown }).issues);
}
