/**
 * The tiers, read from the import lines of every shipped module (tests excluded): lib/ is a leaf; the codecs and
 * sessions of interop/ load no socket, file, process or runtime API (node:fs/net/os/child_process/dgram, Bun, Deno),
 * however indirectly (type-only imports load nothing), nor does the results schema; the engine (src/) imports no
 * dialect (compat/) and no foreign protocol (interop/); anyperf's own protocol (src/native/protocol/) does not import
 * the native modes that drive it; a dialect imports no other dialect's code; the status server does not import the
 * procedures.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";

const ROOT = new URL("../../", import.meta.url).pathname;

/** `import ... from "x"`, `export ... from "x"`, `import "x"` and `import("x")`; group 1 marks a type-only one. */
const IMPORT = /^\s*(?:import|export)\s+(type\s)?(?:[^'"`;]*?\sfrom\s*)?["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)/gm;
/** What no codec may reach: I/O modules and the runtimes' own APIs. */
const IO = /^(node:(fs|fs\/promises|net|os|child_process|dgram)|bun|bun:.*|Bun|Deno)$/;

/**
 * A module's imports: repo paths for relative ones, the bare name otherwise; `Bun`/`Deno` for use of the globals.
 * `runtime` leaves out type-only imports (erased: they load nothing).
 */
export function importsOf(path: string, text: string, runtime = false): string[] {
  const out = [...text.matchAll(IMPORT)].flatMap((m) => {
    if (runtime && m[1] !== undefined) return [];
    const spec = m[2] ?? m[3]!;
    return [spec.startsWith(".") ? normalize(join(dirname(path), spec)) : spec];
  });
  const code = text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:])\/\/.*$/gm, "$1");
  for (const runtime of ["Bun", "Deno"]) if (new RegExp(`\\b${runtime}\\b`).test(code)) out.push(runtime);
  return out;
}

/** Every path from `from` to an import matching `bad`, as the chain of modules that leads there (first found). */
export function reaches(graph: ReadonlyMap<string, string[]>, from: string, bad: RegExp): string[] | undefined {
  const via = new Map<string, string[]>([[from, [from]]]);
  const queue = [from];
  while (queue.length > 0) {
    const at = queue.shift()!;
    for (const next of graph.get(at) ?? []) {
      if (via.has(next)) continue;
      const chain = [...via.get(at)!, next];
      if (bad.test(next)) return chain;
      via.set(next, chain);
      queue.push(next);
    }
  }
  return undefined;
}

function shipped(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === "testdata" ? [] : shipped(path);
    return e.name.endsWith(".ts") && !e.name.endsWith(".test.ts") ? [path] : [];
  });
}

const SOURCES = new Map(["lib", "src", "interop", "compat"].flatMap(shipped).map((p) => [p, readFileSync(join(ROOT, p), "utf8")] as const));
/** Every import, type-only ones included: what a module depends on. */
const GRAPH = new Map([...SOURCES].map(([p, text]) => [p, importsOf(p, text)] as const));
/** What loading a module loads. */
const RUNTIME = new Map([...SOURCES].map(([p, text]) => [p, importsOf(p, text, true)] as const));

/** Each module's imports that break a rule: [module, import] pairs. */
function direct(from: RegExp, to: RegExp): string[] {
  return [...GRAPH].flatMap(([p, imports]) => (from.test(p) ? imports.filter((i) => to.test(i)).map((i) => `${p} -> ${i}`) : []));
}

describe("import graph", () => {
  test("the checker reads imports of every form and finds indirect reach", () => {
    const text = [
      'import { a } from "./a.ts";',
      'import type {\n  B,\n} from "../b.ts";',
      'export { c } from "./c.ts";',
      'const d = await import("node:os");',
      "// Bun.spawn in a comment does not count",
      "const e = Deno.env;",
    ].join("\n");
    expect(importsOf("interop/x/m.ts", text)).toEqual(["interop/x/a.ts", "interop/b.ts", "interop/x/c.ts", "node:os", "Deno"]);
    expect(importsOf("interop/x/m.ts", text, true)).toEqual(["interop/x/a.ts", "interop/x/c.ts", "node:os", "Deno"]);
    const graph = new Map([
      ["interop/x/m.ts", ["interop/x/a.ts"]],
      ["interop/x/a.ts", ["src/y.ts"]],
      ["src/y.ts", ["node:fs"]],
    ]);
    expect(reaches(graph, "interop/x/m.ts", IO)).toEqual(["interop/x/m.ts", "interop/x/a.ts", "src/y.ts", "node:fs"]);
    expect(reaches(graph, "interop/x/m.ts", /^compat\//)).toBeUndefined();
  });

  test("the graph holds the tiers' modules", () => {
    expect(GRAPH.size).toBeGreaterThan(300);
    expect(GRAPH.get("src/native/server.ts")).toContain("src/native/protocol/server-session.ts");
  });

  test("nothing under interop/ or lib/ loads node:fs/net/os/child_process/dgram, Bun or Deno, however indirectly", () => {
    const leaks = [...RUNTIME.keys()]
      .filter((p) => p.startsWith("interop/") || p.startsWith("lib/"))
      .map((p) => reaches(RUNTIME, p, IO)?.join(" > "))
      .filter((chain) => chain !== undefined);
    expect(leaks).toEqual([]);
  });

  test("the results schema loads no I/O (its parts' schemas live apart from their readers)", () => {
    expect(reaches(RUNTIME, "src/report/result.ts", IO)).toBeUndefined();
  });

  test("lib/ is a leaf: it imports only lib/ and zod", () => {
    expect(direct(/^lib\//, /^(?!lib\/|zod$)/)).toEqual([]);
  });

  test("interop/ imports only interop/, lib/, its libraries and the one formula table (src/formulas.ts)", () => {
    expect(direct(/^interop\//, /^(src\/(?!formulas\.ts$)|compat\/|main)/)).toEqual([]);
  });

  test("src/ imports no dialect (compat/) and no foreign protocol (interop/)", () => {
    expect(direct(/^src\//, /^(compat|interop)\//)).toEqual([]);
  });

  test("anyperf's protocol does not import the native modes that drive it, however indirectly (no cycle)", () => {
    const back = [...GRAPH.keys()]
      .filter((p) => p.startsWith("src/native/protocol/"))
      .map((p) => reaches(GRAPH, p, /^src\/native\/(?!protocol\/)/)?.join(" > "))
      .filter((chain) => chain !== undefined);
    expect(back).toEqual([]);
  });

  test("a dialect imports no other dialect's code (compat/netperf none of compat/iperf2, ...)", () => {
    const dialects = ["iperf2", "iperf3", "netperf", "ntttcp"];
    const crossings = dialects.flatMap((d) => {
      const others = dialects.filter((o) => o !== d).join("|");
      return direct(new RegExp(`^compat/${d}/`), new RegExp(`^(compat|interop)/(${others})/`));
    });
    expect(crossings).toEqual([]);
  });

  test("the status server does not import the procedures", () => {
    expect(direct(/^src\/status\//, /^src\/procedure\//)).toEqual([]);
  });
});
