import { readFileSync } from "node:fs";
import { UserError } from "../../src/errors.ts";
import { testShape, type MigratedTest } from "../../interop/netperf/test-request.ts";
import { sprintf } from "./printf.ts";
import { SELECTORS, selectorByName, type Selector, type SelectorContext } from "./selectors.ts";

/**
 * netperf's omni printing (-o CSV, -O columns, -k key=value): which selectors, in which blocks, and the three
 * layouts with their quirks (an empty CSV field is followed by a stray space, columns keep trailing blanks).
 */

const MAX_BLOCKS = 4;

const TPUT = "ELAPSED_TIME,THROUGHPUT,THROUGHPUT_UNITS";
const CPU =
  "LOCAL_CPU_UTIL,LOCAL_CPU_PERCENT_USER,LOCAL_CPU_PERCENT_SYSTEM,LOCAL_CPU_PERCENT_IOWAIT,LOCAL_CPU_PERCENT_IRQ," +
  "LOCAL_CPU_PERCENT_SWINTR,LOCAL_CPU_METHOD,REMOTE_CPU_UTIL,REMOTE_CPU_PERCENT_USER,REMOTE_CPU_PERCENT_SYSTEM," +
  "REMOTE_CPU_PERCENT_IOWAIT,REMOTE_CPU_PERCENT_IRQ,REMOTE_CPU_PERCENT_SWINTR,REMOTE_CPU_METHOD,LOCAL_SD,REMOTE_SD,SD_UNITS";

export function defaultSelection(test: MigratedTest, cpu: boolean): string {
  const s = testShape(test);
  let head: string;
  if (s.clientSends && !s.clientReceives) head = "LSS_SIZE_END,RSR_SIZE_END,LOCAL_SEND_SIZE";
  else if (s.clientReceives && !s.clientSends) head = "RSS_SIZE_END,LSR_SIZE_END,REMOTE_SEND_SIZE";
  else head = "LSS_SIZE_END,LSR_SIZE_END,RSR_SIZE_END,RSS_SIZE_END,REQUEST_SIZE,RESPONSE_SIZE";
  return `${head},${TPUT}${cpu ? `,${CPU}` : ""}`;
}

function range(from: string, to: string): Selector[] {
  const a = SELECTORS.findIndex((s) => s.name === from);
  const b = SELECTORS.findIndex((s) => s.name === to);
  return SELECTORS.slice(a, b + 1);
}

/** A selector list typed on the command line: `;` separates blocks, blanks or commas separate names. */
function parseDirect(text: string): Selector[][] {
  const blocks: Selector[][] = [];
  for (const line of text.split(";").slice(0, MAX_BLOCKS)) {
    if (line === "") continue;
    const block: Selector[] = [];
    for (const token of line.split(/[ ,]+/)) {
      if (token === "") continue;
      const s = selectorByName(token);
      // netperf drops names it does not know (it says so only with -d).
      if (s) block.push(s);
    }
    blocks.push(block);
  }
  return blocks;
}

/** A selection file: one block per line, comma separated; names or header texts; unknown names print blank. */
function parseFile(path: string): Selector[][] {
  let text: string;
  try {
    text = readFileSync(path, "latin1");
  } catch (e) {
    const code = (e as { errno?: number }).errno;
    throw new UserError(`Could not open output selection file '${path}' errno ${Math.abs(code ?? 2)}`, 255);
  }
  const none = selectorByName("OUTPUT_NONE")!;
  const byHeader = new Map(SELECTORS.map((s) => [s.lines.filter((l) => l !== "").join(" ").toLowerCase(), s]));
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  return lines.slice(0, MAX_BLOCKS).map((line) =>
    line
      .replace(/[^\x20-\x7e]/g, "")
      .split(",")
      .map((name) => selectorByName(name) ?? byHeader.get(name.toLowerCase()) ?? none),
  );
}

/** The blocks netperf prints for a selection (undefined = the test's default list). */
export function resolveSelection(selection: string | undefined, test: MigratedTest, cpu: boolean): Selector[][] {
  if (selection === undefined) return parseDirect(defaultSelection(test, cpu));
  if (selection.toLowerCase() === "all") {
    return [
      range("SOCKET_TYPE", "RESPONSE_SIZE"),
      range("LOCAL_CPU_UTIL", "TRANSPORT_MSS"),
      range("LOCAL_SEND_THROUGHPUT", "REMOTE_CORK"),
      range("LOCAL_SYSNAME", "COMMAND_LINE"),
    ];
  }
  if (selection.includes(",") || selection.includes(";") || selectorByName(selection)) return parseDirect(selection);
  return parseFile(selection);
}

function valueText(s: Selector, c: SelectorContext): string | undefined {
  const v = s.value(c);
  return v === undefined ? undefined : sprintf(s.format, v);
}

export function renderCsv(blocks: Selector[][], c: SelectorContext, headers: boolean): string {
  const all = blocks.flat();
  if (blocks.length === 0 || blocks[0]!.length === 0) return "";
  const head = all.map((s) => s.lines.filter((l) => l !== "").join(" ")).join(",");
  let values = "";
  for (const s of all) {
    const v = valueText(s, c);
    // netperf writes a comma and skips one (blank) character for a selector without a value.
    values += v === undefined ? ", " : `${v},`;
  }
  values = values.slice(0, -1);
  return (headers ? `${head}\n` : "") + `${values}\n`;
}

export function renderKeyval(blocks: Selector[][], c: SelectorContext): string {
  let out = "";
  for (const s of blocks.flat()) {
    const v = valueText(s, c);
    if (v !== undefined) out += `${s.name}=${v}\n`;
  }
  return out;
}

export function renderHuman(blocks: Selector[][], c: SelectorContext, headers: boolean): string {
  const width = new Map<Selector, number>();
  for (const s of blocks.flat()) {
    const v = valueText(s, c);
    const longest = Math.max(...s.lines.map((l) => l.length));
    width.set(s, Math.max(longest, v === undefined ? 0 : v.length + 1));
  }
  const parts: string[] = [];
  blocks.forEach((block, i) => {
    if (block.length === 0) return;
    let text = i > 0 ? "\n" : "";
    if (headers) {
      for (let k = 0; k < 4; k++) text += `${block.map((s) => s.lines[k]!.padEnd(width.get(s)! + 1)).join("")}\n`;
    }
    text += `${block.map((s) => (valueText(s, c) ?? "").padEnd(width.get(s)! + 1)).join("")}\n`;
    parts.push(text);
  });
  return parts.join("");
}

export function renderOmni(mode: "csv" | "human" | "keyval", blocks: Selector[][], c: SelectorContext, headers: boolean): string {
  switch (mode) {
    case "csv":
      return renderCsv(blocks, c, headers);
    case "human":
      return renderHuman(blocks, c, headers);
    case "keyval":
      return renderKeyval(blocks, c);
  }
}
