import { parseArgs } from "node:util";
import { UserError } from "../errors.ts";
import { HEADLINE_KEYS, primaryKey } from "./headline.ts";
import { defaultHistoryPath } from "./options.ts";
import { readHistory, type HistoryEntry } from "./history.ts";
import { changeText, formatFigure, LABELS } from "./report.ts";
import { testKind } from "./test-kind.ts";
import { responsivenessCompareRows } from "../native/responsiveness-runs.ts";

export const HISTORY_USAGE = `usage: anyperf history [FILE | --history FILE] [--json]   list the recorded runs (default ${defaultHistoryPath()})`;
export const COMPARE_USAGE = `usage: anyperf compare ID_A ID_B [--history FILE] [--any-kind]   two runs side by side, the change in %, what differed
  runs of different kinds (TCP bulk, UDP bulk, TCP RR, TCP CRR...) are refused unless --any-kind`;

function headlineText(e: HistoryEntry): string {
  if (e.responsiveness?.rpm !== undefined) return `${Math.round(e.responsiveness.rpm)} RPM`;
  const k = primaryKey(e.test);
  const v = e.results[k];
  return v === undefined ? "n/a" : `${formatFigure(k, v)}${k === "throughput_bps" ? "" : " trans/s"}`;
}

export async function historyMain(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, strict: true, allowPositionals: true, options: { json: { type: "boolean" }, history: { type: "string" }, help: { type: "boolean", short: "h" } } });
  if (values.help) {
    console.log(HISTORY_USAGE);
    return 0;
  }
  // --history as compare, report and the runs take it: a user who wrote runs with it reads them back the same way.
  const files = [...positionals, ...(values.history === undefined ? [] : [values.history])];
  if (files.length > 1) throw new UserError(`one history file only, got '${files.join(" ")}': pass one FILE or --history FILE`, 2);
  const path = files[0] ?? defaultHistoryPath();
  const entries = readHistory(path);
  if (entries.cut) console.error(`anyperf: ${path}: ${entries.cut} cut line${entries.cut === 1 ? "" : "s"} (a run killed while writing) passed over`);
  if (values.json) {
    console.log(JSON.stringify(entries, null, 2));
    return 0;
  }
  console.log(`${"id".padEnd(8)}  ${"time".padEnd(24)}  ${"mode".padEnd(8)}  ${"kind".padEnd(9)}  ${"peer".padEnd(15)}  ${"point".padEnd(12)}  headline`);
  for (const e of entries) {
    const point = Object.entries(e.point).map(([k, v]) => `${k}=${v}`).join(" ");
    console.log(`${e.id.padEnd(8)}  ${e.time.padEnd(24)}  ${e.mode.padEnd(8)}  ${testKind(e).padEnd(9)}  ${(e.peer ?? "").padEnd(15)}  ${point.padEnd(12)}  ${headlineText(e)}${e.errors.length ? "  (failed)" : ""}`);
  }
  return 0;
}

export function findRun(entries: HistoryEntry[], id: string, path: string): HistoryEntry {
  const hits = entries.filter((e) => e.id.startsWith(id));
  if (hits.length === 1) return hits[0]!;
  throw new UserError(hits.length === 0 ? `no run '${id}' in ${path}: see 'anyperf history ${path}' for the ids` : `'${id}' matches ${hits.length} runs: give more of the id`, 1);
}

/** The user's options as flag → value ("" for a switch), so a difference names the flag the user typed. */
export function optionMap(argv: readonly string[]): Map<string, string> {
  const m = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (!a.startsWith("-")) continue;
    const next = argv[i + 1];
    const eq = a.indexOf("=");
    if (eq > 0) m.set(a.slice(0, eq), a.slice(eq + 1));
    else if (next !== undefined && !next.startsWith("-")) m.set(a, argv[++i]!);
    else m.set(a, "");
  }
  return m;
}

/** What differed in the set-up of two runs: options, sysctls, host facts. */
export function setupDifferences(a: HistoryEntry, b: HistoryEntry): string[] {
  const out: string[] = [];
  const diff = (label: string, x: string | undefined, y: string | undefined) => {
    if (x !== y) out.push(`${label}: ${x ?? "(not set)"} -> ${y ?? "(not set)"}`);
  };
  const oa = optionMap(a.argv), ob = optionMap(b.argv);
  for (const k of new Set([...oa.keys(), ...ob.keys()])) diff(`option ${k}`, oa.get(k), ob.get(k));
  diff("mode", a.mode, b.mode);
  diff("peer", a.peer, b.peer);
  for (const k of new Set([...Object.keys(a.host.sysctls), ...Object.keys(b.host.sysctls)])) diff(`sysctl ${k}`, a.host.sysctls[k], b.host.sysctls[k]);
  for (const k of ["kernel", "cpu_model", "interface", "nic_driver", "link_speed_bps", "mtu"] as const) diff(k, a.host[k]?.toString(), b.host[k]?.toString());
  return out;
}

/** label, A, B, change in % for each headline figure either run has. */
function headlineRows(a: HistoryEntry, b: HistoryEntry): string[][] {
  const rows: string[][] = [];
  for (const k of HEADLINE_KEYS) {
    const x = a.results[k], y = b.results[k];
    if (x === undefined && y === undefined) continue;
    rows.push([LABELS[k], x === undefined ? "n/a" : formatFigure(k, x), y === undefined ? "n/a" : formatFigure(k, y), changeText(x, y)]);
  }
  return rows;
}

export async function compareMain(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv, strict: true, allowPositionals: true,
    options: { history: { type: "string" }, "any-kind": { type: "boolean" }, help: { type: "boolean", short: "h" } },
  });
  if (values.help) {
    console.log(COMPARE_USAGE);
    return 0;
  }
  if (positionals.length !== 2) throw new UserError("compare needs two run ids: anyperf compare ID_A ID_B (ids from 'anyperf history')", 2);
  const path = values.history ?? defaultHistoryPath();
  const entries = readHistory(path);
  const [a, b] = positionals.map((id) => findRun(entries, id, path)) as [HistoryEntry, HistoryEntry];
  // An RR run's throughput against a UDP run's is a number (+85360 %) that means nothing.
  const [ka, kb] = [testKind(a), testKind(b)];
  if (ka !== kb && !values["any-kind"]) throw new UserError(`compare: ${a.id} is a ${ka} run, ${b.id} a ${kb} run: their figures do not compare; pass --any-kind to set them side by side anyway`, 2);
  // Two responsiveness runs compare phase by phase; a run without phases (compared with --any-kind) by its headline.
  const rows = a.responsiveness && b.responsiveness ? responsivenessCompareRows(a.responsiveness, b.responsiveness) : headlineRows(a, b);
  const out = [`${"".padEnd(16)}  ${`A ${a.id}`.padStart(16)}  ${`B ${b.id}`.padStart(16)}  change`];
  for (const [label, x, y, change] of rows) out.push(`${label!.padEnd(16)}  ${x!.padStart(16)}  ${y!.padStart(16)}  ${change}`);
  const diffs = setupDifferences(a, b);
  out.push(diffs.length === 0 ? "set-up: the same options, sysctls and host" : "set-up differences:", ...diffs.map((d) => `  ${d}`));
  console.log(out.join("\n"));
  return 0;
}
