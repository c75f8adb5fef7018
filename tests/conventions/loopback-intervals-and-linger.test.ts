/**
 * Issue 21 item 14: `anyperf loopback` prints iperf3-style interval lines (-i) into a pipe and on a terminal, and the
 * status endpoint of a client run stays up after it (--linger S; 30 s at a terminal, 5 s otherwise; Ctrl+C ends it).
 * The endpoints take free ports (--http 127.0.0.1:0).
 */
import { describe, expect, test } from "bun:test";
import { intervalLines, INTERVAL_HEADER } from "../../src/report/progress.ts";
import type { Interval } from "../../src/report/result.ts";
import { lingerMs, takeHttpOptions } from "../../src/status/global-http.ts";
import { Results } from "../../src/report/result.ts";

const MAIN = new URL("../../main.ts", import.meta.url).pathname;
const SUM_LINE = /^\[SUM\]\s+\d+\.\d\d-\d+\.\d\d\s+sec\s+\S+ \S+\s+\S+ [kKMGT]?bit\/s(  \((warm-up|cool-down)\))?$/;

async function run(args: string[], ms = 30_000) {
  const p = Bun.spawn([process.execPath, MAIN, ...args], { stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  const timer = setTimeout(() => p.kill("SIGKILL"), ms);
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  clearTimeout(timer);
  return { out, err, code };
}

describe("interval lines", () => {
  test("known interval: one [SUM] line with the report's columns; streams listed when 2 to 8", () => {
    const figures = { bytes: 125_000_000, seconds: 1, throughput_bps: 1e9 };
    const i: Interval = {
      start: -0.01,
      end: 1,
      phase: "measuring",
      sum: figures,
      streams: [
        { ...figures, id: 0, side: "recv" },
        { ...figures, id: 1, side: "send" },
      ],
    };
    expect(intervalLines(i)).toEqual(["[SUM]   0.00-1.00   sec      119 MiB     1.00 Gbit/s"]);
    const two = { ...i, phase: "warm-up" as const, streams: [0, 1].map((id) => ({ ...figures, id, side: "recv" as const })) };
    expect(intervalLines(two)).toEqual([
      "[  0]   0.00-1.00   sec      119 MiB     1.00 Gbit/s  (warm-up)",
      "[  1]   0.00-1.00   sec      119 MiB     1.00 Gbit/s  (warm-up)",
      "[SUM]   0.00-1.00   sec      119 MiB     1.00 Gbit/s  (warm-up)",
    ]);
  });

  test("piped: a header, then a [SUM] line per interval before the summary; --json stays one document", async () => {
    const r = await run(["loopback", "-t", "2", "-P", "1", "-i", "0.5"]);
    expect(r.code).toBe(0);
    const lines = r.out.split("\n");
    const summary = lines.findIndex((l) => l.startsWith("anyperf loopback:"));
    expect(lines[0]).toBe(INTERVAL_HEADER);
    const sums = lines.slice(1, summary).filter((l) => SUM_LINE.test(l));
    expect(sums.length).toBeGreaterThanOrEqual(4);
    expect(sums.length).toBe(summary - 1);
    const json = await run(["loopback", "-t", "1", "-P", "1", "-i", "0.5", "--json"]);
    expect(Results.parse(JSON.parse(json.out)).intervals.length).toBeGreaterThanOrEqual(2);
  }, 60_000);

  test("on a terminal too (under script(1)'s pty)", async () => {
    const cmd = `${process.execPath} ${MAIN} loopback -t 2 -P 1 -i 0.5`;
    const p = Bun.spawn(["script", "-qec", cmd, "/dev/null"], { stdout: "pipe", stderr: "pipe", stdin: "ignore" });
    const [out, code] = await Promise.all([new Response(p.stdout).text(), p.exited]);
    expect(code).toBe(0);
    const sums = out.split(/\r?\n/).filter((l) => SUM_LINE.test(l.replace(/\r/g, "")));
    expect(sums.length).toBeGreaterThanOrEqual(4);
  }, 60_000);
});

describe("--linger", () => {
  test("parsed with --http; a bad value is one line naming it; defaults 30 s at a terminal, 5 s otherwise", () => {
    expect(takeHttpOptions(["-t", "1", "--http", "9", "--linger", "2.5"])).toEqual({ rest: ["-t", "1"], http: "9", token: undefined, lingerS: 2.5 });
    expect(takeHttpOptions(["--http=9", "--linger=0"]).lingerS).toBe(0);
    expect(() => takeHttpOptions(["--http", "9", "--linger", "-1"])).toThrow("--linger -1: must be seconds from 0 to 86400; see --help");
    expect(() => takeHttpOptions(["--linger", "5"])).toThrow("--linger without --http: add --http [ADDR:]PORT");
    expect(lingerMs(undefined, true)).toBe(30_000);
    expect(lingerMs(undefined, false)).toBe(5_000);
    expect(lingerMs(12, true)).toBe(12_000);
  });

  /** Reads `stream` until `done` says what it holds is whole. */
  async function readUntil<T>(stream: ReadableStream<Uint8Array>, done: (text: string) => T | undefined): Promise<{ value: T; rest: ReadableStreamDefaultReader<Uint8Array> }> {
    const reader = stream.getReader();
    let text = "";
    for (;;) {
      const { done: ended, value } = await reader.read();
      if (ended) throw new Error(`stream ended early: ${text}`);
      text += new TextDecoder().decode(value);
      const v = done(text);
      if (v !== undefined) return { value: v, rest: reader };
    }
  }

  /** A 1 s client run with the endpoint on a free port; resolves once its results document is on stdout. */
  async function finishedRun(linger: string) {
    const p = Bun.spawn([process.execPath, MAIN, "loopback", "-t", "1", "-P", "1", "--json", "--http", "127.0.0.1:0", "--linger", linger], {
      stdout: "pipe",
      stderr: "pipe",
      stdin: "ignore",
    });
    const { value: url, rest: stderr } = await readUntil(p.stderr, (t) => /status: (http:\/\/\S+\/)\n/.exec(t)?.[1]);
    const parse = (t: string) => {
      try {
        return Results.parse(JSON.parse(t));
      } catch {
        return undefined;
      }
    };
    const { value: doc } = await readUntil(p.stdout, parse);
    return { p, url, doc, stderr, printedAt: performance.now() };
  }

  test("the endpoint serves /results for --linger S after the run, then the process exits", async () => {
    const { p, url, doc, printedAt } = await finishedRun("3");
    await Bun.sleep(1500);
    const res = await fetch(`${url}results`, { signal: AbortSignal.timeout(5000) });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { summary: { bytes: number } }).summary.bytes).toBe(doc.summary.bytes);
    expect(await p.exited).toBe(0);
    const lingered = performance.now() - printedAt;
    expect(lingered).toBeGreaterThan(2500);
    expect(lingered).toBeLessThan(8000);
  }, 60_000);

  test("Ctrl+C ends a long linger at once, with the run's own exit status", async () => {
    const { p, url, stderr } = await finishedRun("600");
    expect((await fetch(`${url}results`, { signal: AbortSignal.timeout(5000) })).status).toBe(200);
    const t = performance.now();
    p.kill("SIGINT");
    expect(await p.exited).toBe(0);
    expect(performance.now() - t).toBeLessThan(3000);
    let err = "";
    for (let r = await stderr.read(); !r.done; r = await stderr.read()) err += new TextDecoder().decode(r.value);
    expect(err).toContain(`status: results stay at ${url}results for 600 s (--linger S sets it; Ctrl+C ends it now)`);
  }, 60_000);
});
