/**
 * The procedures end to end: `anyperf loopback --repeat`, `anyperf client --sweep` against a native server, the
 * history they write (SIGKILL mid-write leaves whole lines), `anyperf history` and `anyperf compare`.
 * Ports 40000-40019.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePorts, spawnProc, sleep } from "../support/processes.ts";
import { nativeServers } from "../native/harness.ts";
import { median, relativeSpreadPercent } from "../../src/formulas.ts";
import { HISTORY_VERSION, HistoryEntry } from "../../src/procedure/history.ts";
import { Results } from "../../src/report/result.ts";

const MAIN = join(import.meta.dir, "..", "..", "main.ts");
const anyperf = (args: string[], limitMs = 60_000) => spawnProc([process.execPath, MAIN, ...args], limitMs);
const tmp = () => mkdtempSync(join(tmpdir(), "anyperf-proc-"));
// Whole lines only: a run still writing may have its line half-copied (the reader in history.ts passes over it).
const lines = (f: string) => readFileSync(f, "utf8").split("\n").slice(0, -1).map((l) => HistoryEntry.parse(JSON.parse(l)));
const start = nativeServers();

describe("--repeat", () => {
  test("loopback --repeat 3 --json: each run, and the aggregate by the median and spread formulas; three history lines", async () => {
    const hist = join(tmp(), "h.jsonl");
    const r = await anyperf(["loopback", "-t", "0.5", "-P", "1", "--repeat", "3", "--json", "--history", hist]).done;
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as { runs: unknown[]; aggregate: Record<string, { n: number; median: number; min: number; max: number; spread_percent: number }> };
    const runs = doc.runs.map((x) => Results.parse(x));
    expect(runs).toHaveLength(3);
    const bps = runs.map((x) => x.summary.throughput_bps);
    expect(bps.every((b) => b > 0)).toBe(true);
    const t = doc.aggregate.throughput_bps!;
    // --json prints bits/s whole and percents to 0.01; the aggregate is taken over the exact figures.
    expect(t).toMatchObject({ n: 3, median: median(bps), min: Math.min(...bps), max: Math.max(...bps) });
    expect(t.spread_percent).toBeCloseTo(relativeSpreadPercent(Math.min(...bps), Math.max(...bps), median(bps)), 1);
    expect(doc.aggregate.cpu_busy_percent?.n).toBe(3);
    const h = lines(hist);
    expect(h.map((e) => e.repeat)).toEqual([1, 2, 3]);
    expect(new Set(h.map((e) => e.group)).size).toBe(1);
    // The history keeps the exact figures.
    expect(h.map((e) => Math.round(e.results.throughput_bps!))).toEqual(bps);
    expect(h[0]).toMatchObject({ v: HISTORY_VERSION, mode: "loopback", peer: "127.0.0.1", argv: ["-t", "0.5", "-P", "1", "--json"], host: { interface: "lo" } });
    expect(h[0]!.host.sysctls["net.ipv4.tcp_rmem"]).toMatch(/^\d+ \d+ \d+$/);
    // Schema 2: the run's one receiving stream over its intervals, and the host's cores, for the report.
    const d = h[0]!.detail!;
    expect(d.over_time!.streams.map((st) => [st.id, st.side])).toEqual([[0, "recv"]]);
    expect(d.over_time!.t.length).toBe(d.over_time!.streams[0]!.bps.length);
    expect(d.cpu_per_core!.length).toBeGreaterThan(0);
  }, 90_000);

  test("Ctrl+C during the runs: the finished runs are reported, the cut one listed but not counted, exit 130", async () => {
    const hist = join(tmp(), "h.jsonl");
    const run = anyperf(["loopback", "-t", "0.5", "-P", "1", "--repeat", "20", "--history", hist]);
    while (!existsSync(hist) || lines(hist).length < 2) await sleep(50);
    await sleep(200);
    run.kill("SIGINT");
    const r = await run.done;
    expect(r.code).toBe(130);
    const n = lines(hist).length;
    expect(n).toBeGreaterThanOrEqual(2);
    expect(lines(hist).at(-1)!.interrupted).toBe(true);
    expect(r.stdout).toMatch(new RegExp(`^${n - 1} runs \\(1 failed or interrupted, not counted\\): median and range`, "m"));
    expect(r.stdout).toMatch(/^  throughput\s+\S+ [GM]bit\/s\s+\S+ [GM]bit\/s – \S+ [GM]bit\/s \(range \d+\.\d % of the median\)$/m);
  }, 90_000);
});

describe("--sweep", () => {
  test("client --sweep streams=1,2,4 --repeat 2: a row per point, the best marked; a server refusing 4 streams stops it with a clear message", async () => {
    const port = freePorts(40000, 40020, 1);
    await start(port, ["--max-streams", "2"]);
    const hist = join(tmp(), "h.jsonl");
    const r = await anyperf(["client", "127.0.0.1", "-p", String(port), "-t", "0.5", "--sweep", "streams=1,2,4", "--repeat", "2", "--history", hist], 120_000).done;
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/anyperf: stopped early: point streams=4, run 1 failed: .*; the table holds the points before it/);
    const out = r.stdout.trim().split("\n");
    expect(out[0]).toBe("sweep: medians per point; * best throughput");
    const rows = out.filter((l) => /streams=\d/.test(l));
    expect(rows.map((l) => /streams=(\d)/.exec(l)![1])).toEqual(["1", "2"]);
    expect(rows.filter((l) => l.startsWith("*"))).toHaveLength(1);
    for (const l of rows) expect(l).toMatch(/streams=\d\s+2\s+[\d.]+ [GM]bit\/s .* [\d.]+ %$/);
    // The two points' four runs are recorded; compare names the option that changed between them.
    const h = lines(hist);
    expect(h.filter((e) => e.errors.length === 0).map((e) => e.point.streams)).toEqual(["1", "1", "2", "2"]);
    const c = await anyperf(["compare", h[0]!.id, h[2]!.id, "--history", hist]).done;
    expect(c.code).toBe(0);
    expect(c.stdout).toMatch(/^throughput\s+\S+ [GM]bit\/s\s+\S+ [GM]bit\/s\s+[+-]\d+\.\d %$/m);
    expect(c.stdout).toContain("option -P: 1 -> 2");
  }, 150_000);

  test("a bad value at any point is refused before the first run", async () => {
    const r = await anyperf(["loopback", "-t", "0.3", "--sweep", "streams=1,x", "--no-history"]).done;
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/^anyperf: --parallel x: not a number/);
  });
});

describe("history", () => {
  test("SIGKILL while runs are being recorded never leaves a torn line: the file parses line by line", async () => {
    const hist = join(tmp(), "h.jsonl");
    // A writer appending as fast as it can, killed at several moments, is where a torn line would show.
    const writer = `import { appendHistory } from ${JSON.stringify(join(import.meta.dir, "..", "..", "src/procedure/history.ts"))};
      for (let i = 0; ; i++) appendHistory(${JSON.stringify(hist)}, { v: 1, id: String(i), time: new Date().toISOString(), mode: "loopback", argv: Array(200).fill("-P"), results: { throughput_bps: i } });`;
    for (const wait of [0, 40, 110]) {
      const size = existsSync(hist) ? statSync(hist).size : 0;
      const p = spawnProc([process.execPath, "-e", writer], 10_000);
      // Killed once it writes (its start-up takes a varying time on a loaded machine), at a few moments after.
      for (const end = Date.now() + 10_000; !existsSync(hist) || statSync(hist).size === size; await sleep(5)) {
        if (Date.now() > end) throw new Error("the writer wrote nothing in 10 s");
      }
      await sleep(wait);
      p.kill("SIGKILL");
      await p.done;
    }
    // And a real run killed mid-way.
    const run = anyperf(["loopback", "-t", "0.3", "-P", "1", "--repeat", "50", "--json", "--history", hist]);
    const before = lines(hist).length;
    while (lines(hist).length < before + 2) await sleep(50);
    run.kill("SIGKILL");
    expect((await run.done).code).not.toBe(0);
    const text = readFileSync(hist, "utf8");
    expect(text.endsWith("\n")).toBe(true);
    const all = lines(hist);
    expect(all.length).toBeGreaterThan(before + 1);
    expect(all.at(-1)!.mode).toBe("loopback");
    const l = await anyperf(["history", hist]).done;
    expect(l.code).toBe(0);
    expect(l.stdout.trim().split("\n")).toHaveLength(all.length + 1);
    const j = await anyperf(["history", hist, "--json"]).done;
    expect((JSON.parse(j.stdout) as { id: string }[]).map((e) => e.id)).toEqual(all.map((e) => e.id));
    // The flag the runs were recorded with reads them back too; a file given twice is one line naming both ways.
    const f = await anyperf(["history", "--history", hist]).done;
    expect(f.stdout).toBe(l.stdout);
    const two = await anyperf(["history", hist, "--history", hist]).done;
    expect([two.code, two.stderr.trim()]).toEqual([2, expect.stringContaining("pass one FILE or --history FILE")]);
  }, 90_000);
});
