import { describe, expect, test } from "bun:test";
import { consoleRuns } from "../../tests/fixtures/netperf/load.ts";
import { parseNetperfArgs } from "./netperf-args.ts";
import { renderCsv, renderHuman, renderKeyval, resolveSelection } from "./omni-output.ts";
import type { NetperfPlan } from "./plan.ts";
import { SELECTORS, selectorListing, type Selector, type SelectorContext } from "./selectors.ts";

/**
 * Stock netperf's -o/-O/-k output (tests/fixtures/netperf/stock-console-omni.txt): the selection (default lists,
 * `all`, typed lists with blocks), the header texts and the three layouts must match. Values are taken from what
 * stock printed, turned back into numbers, and must print the same through each selector's format.
 */

const runs = consoleRuns("stock-console-omni.txt").filter((r) => r.argv.some((a) => ["-o", "-O", "-k"].includes(a)));
const CTX = {} as SelectorContext;

function planOf(argv: string[]): NetperfPlan {
  const cmd = parseNetperfArgs(argv);
  if (cmd.kind !== "run") throw new Error("not a run");
  return cmd.plan;
}

/** Turns printed text back into the value the selector's format was given. */
function parsePrinted(s: Selector, text: string): number | string {
  if (s.format === "%s/s") return text.replace(/\/s$/, "");
  if (s.format === '"%s"') return text.replace(/^"|"$/g, "");
  if (s.format === "%s" || s.format === "%c") return text;
  if (s.format.startsWith("0x")) return parseInt(text.slice(2), 16) | 0;
  if (text === "-nan") return Number.NaN;
  return Number(text);
}

function withValues(blocks: Selector[][], values: Map<string, string | undefined>): Selector[][] {
  return blocks.map((b) =>
    b.map((s) => ({
      ...s,
      value: () => {
        const t = values.get(s.name);
        return t === undefined ? undefined : parsePrinted(s, t);
      },
    })),
  );
}

function topLineLength(plan: NetperfPlan, output: string): number {
  return plan.printHeaders ? output.indexOf("\n") + 1 : 0;
}

describe("omni output matches stock netperf", () => {
  for (const run of runs) {
    const plan = planOf(run.argv);
    if (plan.output === "human" && plan.outputSelection === "all") continue;
    test(run.argv.join(" "), () => {
      const body = run.output.slice(topLineLength(plan, run.output));
      const blocks = resolveSelection(plan.outputSelection, plan.test, plan.localCpu || plan.remoteCpu);
      const flat = blocks.flat();
      const values = new Map<string, string | undefined>();
      const lines = body.split("\n");
      if (plan.output === "keyval") {
        for (const l of lines) {
          const eq = l.indexOf("=");
          if (eq > 0) values.set(l.slice(0, eq), l.slice(eq + 1));
        }
        expect(renderKeyval(withValues(blocks, values), CTX)).toBe(body);
      } else if (plan.output === "csv") {
        const valueLine = lines[plan.printHeaders ? 1 : 0]!;
        // A selector without a value leaves ", " behind; split on commas and undo that stray blank.
        const fields = valueLine.split(",");
        flat.forEach((s, k) => {
          // The command line is last and may itself contain commas.
          const t = s.name === "COMMAND_LINE" ? fields.slice(k).join(",") : fields[k]!;
          if (s.name === "RESULT_BRAND" && plan.brand === undefined) {
            values.set(s.name, undefined);
            fields[k + 1] = fields[k + 1]!.replace(/^ /, "");
          } else values.set(s.name, t);
        });
        expect(renderCsv(withValues(blocks, values), CTX, plan.printHeaders)).toBe(body);
      } else {
        const valueLines = lines.filter((_, k) => k % 6 === 4 || (k % 6 === 4 && k > 0));
        let at = 0;
        for (const block of blocks) {
          const tokens = (valueLines[at++] ?? "").trim().split(/\s{2,}/);
          let t = 0;
          for (const s of block) values.set(s.name, s.name === "RESULT_BRAND" && plan.brand === undefined ? undefined : tokens[t++]);
        }
        expect(renderHuman(withValues(blocks, values), CTX, plan.printHeaders)).toBe(body);
      }
    });
  }

  test("`-o ?` lists every selector in netperf's order", () => {
    const stock = "OUTPUT_NONE,SOCKET_TYPE,PROTOCOL,DIRECTION,ELAPSED_TIME,THROUGHPUT,THROUGHPUT_UNITS,LSS_SIZE_REQ";
    expect(selectorListing(true).startsWith(stock)).toBe(true);
    expect(selectorListing(true).trimEnd().endsWith("LOCAL_FILL_FILE,REMOTE_FILL_FILE,COMMAND_LINE,OUTPUT_END")).toBe(true);
    expect(SELECTORS.length).toBe(175);
    expect(parseNetperfArgs(["-t", "TCP_RR", "--", "-o", "?"])).toEqual({ kind: "print", text: selectorListing(true), exitCode: 1, stdout: true });
    expect(parseNetperfArgs(["--", "-O", "?"])).toEqual({ kind: "print", text: selectorListing(false), exitCode: 1, stdout: true });
  });

  test("the first of -h and the `?` listings is printed, as netperf 2.7.0 exits on the first", () => {
    expect(parseNetperfArgs(["-t", "omni", "--", "-O", "?", "-k", "?"])).toEqual({ kind: "print", text: selectorListing(false), exitCode: 1, stdout: true });
    expect(parseNetperfArgs(["-t", "omni", "--", "-h", "-o", "?"])).toEqual(parseNetperfArgs(["-t", "omni", "--", "-h"]));
  });

  test("unknown names are dropped, names are case-insensitive, ; starts a block", () => {
    const blocks = resolveSelection("throughput,NOPE;p99_latency mean_latency", "TCP_RR", false);
    expect(blocks.map((b) => b.map((s) => s.name))).toEqual([["THROUGHPUT"], ["P99_LATENCY", "MEAN_LATENCY"]]);
  });
});
