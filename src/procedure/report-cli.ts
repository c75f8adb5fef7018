import { parseArgs } from "node:util";
import { UserError } from "../errors.ts";
import { checkOutputPath, saveOutput, writeFileAtomic } from "../report/atomic-file.ts";
import { findRun } from "./history-cli.ts";
import { readHistory } from "./history.ts";
import { defaultHistoryPath } from "./options.ts";
import { reportHtml } from "./report-html.ts";

export const REPORT_USAGE = `usage: anyperf report [--history FILE] [IDS...] -o report.html
  one self-contained HTML file (inline SVG charts, nothing fetched when viewed) of the recorded runs:
  all of them, or the ids (or unique prefixes) given; history default ${defaultHistoryPath()}`;

export async function reportMain(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv, strict: true, allowPositionals: true,
    options: { history: { type: "string" }, output: { type: "string", short: "o" }, help: { type: "boolean", short: "h" } },
  });
  if (values.help) {
    console.log(REPORT_USAGE);
    return 0;
  }
  const out = values.output;
  if (out === undefined) throw new UserError("report needs an output file: add -o report.html", 2);
  checkOutputPath("-o", out);
  const path = values.history ?? defaultHistoryPath();
  const all = readHistory(path);
  if (all.cut) console.error(`anyperf: ${path}: ${all.cut} cut line${all.cut === 1 ? "" : "s"} (a run killed while writing) passed over`);
  const entries = positionals.length ? positionals.map((id) => findRun(all, id, path)) : all;
  if (entries.length === 0) throw new UserError(`history ${path} has no runs: run a test first, or pass --history FILE`, 1);
  saveOutput("-o", out, () => writeFileAtomic(out, reportHtml(entries, path)));
  console.log(`${out}: ${entries.length} run${entries.length === 1 ? "" : "s"}`);
  return 0;
}
