/**
 * Every section citation in the code names the document it cites and a section that document has, so a reader can
 * follow it inside the repo: `docs/protocols/iperf3.md §6.2`, several sections after one name
 * (`docs/protocols/netperf.md §6.1, §9`), a range (`§5–6`), or an outside standard by name (`RFC 9110 §15.5.6`).
 * The section sign is written as an escape in this file so the scan does not read its own examples.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";

const ROOT = new URL("../../", import.meta.url).pathname;
const SIGN = "\u00a7";
/** A document a citation may name: a file under docs/, or an RFC (outside the repo, taken on trust). */
const DOCUMENT = /docs\/[\w./-]+\.md|RFC \d+/g;
const SECTION = new RegExp(`${SIGN}\\s*(\\d+(?:\\.\\d+)*)?(?:\\s*[–-]\\s*${SIGN}?\\s*(\\d+(?:\\.\\d+)*))?`, "g");
const COMMENT_LINE = /^\s*(\/\/|\/\*\*?|\*)/;

/** Section numbers of a markdown file's numbered headings ("## 4.", "### 4.2 Title"). */
function sectionsOf(markdown: string): Set<string> {
  const out = new Set<string>();
  for (const m of markdown.matchAll(/^#{1,6}\s+(\d+(?:\.\d+)*)\.?\s/gm)) out.add(m[1]!);
  return out;
}

/**
 * Problems with the citations in one file's text. A citation's document is the last one named before it on its
 * line or, in a comment, on the comment's earlier lines.
 */
export function citationProblems(text: string, readDoc: (path: string) => string | undefined): string[] {
  const problems: string[] = [];
  let commentDoc: string | undefined;
  text.split("\n").forEach((line, i) => {
    const inComment = COMMENT_LINE.test(line);
    if (!inComment) commentDoc = undefined;
    const docs = [...line.matchAll(DOCUMENT)].map((m) => ({ at: m.index!, name: m[0] }));
    for (const m of line.matchAll(SECTION)) {
      const where = `line ${i + 1}: ${line.trim()}`;
      const doc = docs.filter((d) => d.at < m.index!).at(-1)?.name ?? (inComment ? commentDoc : undefined);
      if (doc === undefined) {
        problems.push(`${where}: names no document (write docs/protocols/FILE.md ${SIGN}N)`);
        continue;
      }
      if (m[1] === undefined) {
        problems.push(`${where}: ${SIGN} without a section number`);
        continue;
      }
      if (doc.startsWith("RFC ")) continue;
      const body = readDoc(doc);
      if (body === undefined) {
        problems.push(`${where}: ${doc} does not exist`);
        continue;
      }
      const sections = sectionsOf(body);
      for (const n of [m[1], m[2]]) if (n !== undefined && !sections.has(n)) problems.push(`${where}: ${doc} has no ${SIGN}${n}`);
    }
    if (docs.length > 0 && inComment) commentDoc = docs.at(-1)!.name;
  });
  return problems;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (e.name === "node_modules" || e.name.startsWith(".") || e.name === "dist") return [];
    const path = join(dir, e.name);
    return e.isDirectory() ? sourceFiles(path) : e.name.endsWith(".ts") ? [path] : [];
  });
}

function readDoc(path: string): string | undefined {
  try {
    return readFileSync(join(ROOT, path), "utf8");
  } catch {
    return undefined;
  }
}

describe("section citations", () => {
  test("the checker catches a bare citation, a missing section and a missing file", () => {
    const docs: Record<string, string> = { "docs/protocols/x.md": "# X\n## 1. One\n### 1.2 Two\n## 3. Three\n" };
    const check = (text: string) => citationProblems(text, (p) => docs[p]);
    expect(check(`// as the spec says (${SIGN}1.2)`)).toHaveLength(1);
    expect(check(`// docs/protocols/x.md ${SIGN}1.2, ${SIGN}3 and ${SIGN}1–3`)).toEqual([]);
    expect(check(`/**\n * see docs/protocols/x.md\n * ${SIGN}1.2\n */`)).toEqual([]);
    expect(check(`// docs/protocols/x.md ${SIGN}2`)[0]).toContain(`has no ${SIGN}2`);
    expect(check(`// docs/protocols/x.md ${SIGN}1–2`)[0]).toContain(`has no ${SIGN}2`);
    expect(check(`// docs/protocols/y.md ${SIGN}1`)[0]).toContain("does not exist");
    expect(check(`test("docs/protocols/x.md ${SIGN}3", () => {});\nconst a = 1; // ${SIGN}3`)).toHaveLength(1);
    expect(check(`// RFC 9110 ${SIGN}15.5.6`)).toEqual([]);
  });

  test("every citation in the tree names an existing document and section", () => {
    const problems = sourceFiles(ROOT).flatMap((file) =>
      citationProblems(readFileSync(file, "utf8"), readDoc).map((p) => `${relative(ROOT, file)} ${p}`),
    );
    expect(problems).toEqual([]);
  });
});
