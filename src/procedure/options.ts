import { homedir } from "node:os";
import { join } from "node:path";
import { UserError } from "../errors.ts";
import { emptyHistoryPath } from "./history.ts";

/** What --sweep can vary, and the command's own flag each point passes (so every check of that flag applies). */
export const SWEEP_FLAGS = { streams: "-P", length: "-l", window: "-w", rate: "-b" } as const;
export type SweepKey = keyof typeof SWEEP_FLAGS;
export type Point = Partial<Record<SweepKey, string>>;

export interface ProcedureOptions {
  /** The command's own argv, procedure flags taken out. */
  rest: string[];
  repeat: number;
  sweeps: { key: SweepKey; values: string[] }[];
  /** undefined: --no-history. */
  history: string | undefined;
  /** The user named the file (a failure to write it is an error, not a warning). */
  historyGiven: boolean;
}

export const PROCEDURE_USAGE = `      --repeat N       run N times; report the median and spread (min-max, %) of every figure
      --sweep K=V,..   one run (or --repeat runs) per value; K: ${Object.keys(SWEEP_FLAGS).join(", ")}; several make a grid
      --history FILE   append each run as a JSON line (default ${defaultHistoryPath().replace(homedir(), "~")})
      --no-history     do not record the runs`;

/** $XDG_STATE_HOME/anyperf/history.jsonl, or ~/.local/state/anyperf/history.jsonl (XDG base directory default). */
export function defaultHistoryPath(env: Record<string, string | undefined> = process.env): string {
  const state = env.XDG_STATE_HOME || join(env.HOME || homedir(), ".local", "state");
  return join(state, "anyperf", "history.jsonl");
}

/** Takes --repeat, --sweep, --history and --no-history out of a native command's argv. */
export function takeProcedureOptions(argv: readonly string[]): ProcedureOptions {
  const rest: string[] = [];
  let repeat = 1;
  let history: string | undefined = defaultHistoryPath();
  let historyGiven = false;
  let noHistory = false;
  const sweeps: ProcedureOptions["sweeps"] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const m = /^(--repeat|--sweep|--history)(?:=(.*))?$/.exec(a);
    if (a === "--no-history") noHistory = true;
    if (!m) {
      if (a !== "--no-history") rest.push(a);
      continue;
    }
    const value = m[2] ?? argv[++i];
    if (value === undefined) throw new UserError(`${m[1]} needs a value, e.g. ${m[1] === "--repeat" ? "--repeat 3" : m[1] === "--sweep" ? "--sweep streams=1,2,4" : "--history runs.jsonl"}`, 2);
    if (m[1] === "--repeat") {
      repeat = Number(value);
      if (!Number.isInteger(repeat) || repeat < 1 || repeat > 1000) throw new UserError(`--repeat ${value}: pass a whole number of runs, 1-1000`, 2);
    } else if (m[1] === "--history") {
      if (value === "") throw emptyHistoryPath();
      history = value;
      historyGiven = true;
    } else sweeps.push(parseSweep(value));
  }
  if (noHistory && historyGiven) throw new UserError("--history and --no-history both given: pass one", 2);
  if (new Set(sweeps.map((s) => s.key)).size !== sweeps.length) throw new UserError("--sweep names the same key twice: give each key once, its values comma-separated", 2);
  return { rest, repeat, sweeps, history: noHistory ? undefined : history, historyGiven };
}

function parseSweep(text: string): { key: SweepKey; values: string[] } {
  const m = /^([a-z]+)=(.+)$/.exec(text);
  const key = m?.[1];
  if (!m || !(key! in SWEEP_FLAGS)) throw new UserError(`--sweep ${text}: expected KEY=V1,V2,... with KEY one of ${Object.keys(SWEEP_FLAGS).join(", ")}, e.g. --sweep streams=1,2,4`, 2);
  const values = m[2]!.split(",");
  if (values.some((v) => v === "") || values.length > 100) throw new UserError(`--sweep ${text}: pass 1-100 comma-separated values, none empty`, 2);
  return { key: key as SweepKey, values };
}

/** Every combination of the sweeps, the first key varying slowest; one empty point without sweeps. */
export function gridPoints(sweeps: ProcedureOptions["sweeps"]): Point[] {
  let points: Point[] = [{}];
  for (const s of sweeps) points = points.flatMap((p) => s.values.map((v) => ({ ...p, [s.key]: v })));
  if (points.length > 1000) throw new UserError(`--sweep: ${points.length} points; keep the grid at 1000 points or fewer`, 2);
  return points;
}

/** The command-line flags a point adds after the user's own (the later value wins in parseArgs). */
export function pointArgs(p: Point): string[] {
  return Object.entries(p).flatMap(([k, v]) => [SWEEP_FLAGS[k as SweepKey], v]);
}

export function pointLabel(p: Point): string {
  return Object.entries(p).map(([k, v]) => `${k}=${v}`).join(" ");
}
