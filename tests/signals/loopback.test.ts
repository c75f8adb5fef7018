import { expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Results } from "../../src/report/result.ts";
import { anyperf, dump, interruptAfter, scratch, sleep, tempLeftovers } from "./harness.ts";

/** `anyperf loopback`: Ctrl+C and SIGTERM end the run with its report (text or --json) and a complete --csv. */

test("SIGINT: the text report of what was measured, a complete --csv, exit 130", async () => {
  const dir = scratch();
  const csv = join(dir, "run.csv");
  const c = anyperf(["loopback", "-t", "30", "-P", "1", "-i", "0.5", "--csv", csv]);
  const f = await interruptAfter(c, 1500, "SIGINT");
  expect(f.code, dump(f)).toBe(130);
  expect(f.afterSignalMs!).toBeLessThan(5000);
  expect(f.stdout).toMatch(/\[SUM\] recv\s+[\d.]+ [KMG]iB/);
  const [head, ...lines] = readFileSync(csv, "utf8").trimEnd().split("\n");
  const names = head!.split(",");
  const rows = lines.map((l) => Object.fromEntries(l.split(",").map((v, i) => [names[i]!, v])));
  const sums = rows.filter((r) => r.stream === "SUM" && r.phase === "measuring");
  expect(sums.length).toBeGreaterThan(0);
  expect(Number(sums.at(-1)!.end_s)).toBeLessThan(5);
  expect(sums.reduce((n, r) => n + Number(r.bytes), 0)).toBeGreaterThan(0);
  expect(tempLeftovers(dir)).toEqual([]);
}, 20_000);

test("SIGTERM with --json: one parsable document marked interrupted, exit 143", async () => {
  const f = await interruptAfter(anyperf(["loopback", "-t", "30", "-P", "1", "--json"]), 1500, "SIGTERM");
  expect(f.code, dump(f)).toBe(143);
  const r = Results.parse(JSON.parse(f.stdout));
  expect(r.interrupted).toBe(true);
  expect(r.summary.bytes).toBeGreaterThan(0);
  expect(r.summary.seconds).toBeLessThan(5);
}, 20_000);

test("SIGKILL mid-run: --csv already holds the header and every interval completed so far, whole rows only", async () => {
  const dir = scratch();
  const csv = join(dir, "run.csv");
  const c = anyperf(["loopback", "-t", "30", "-P", "2", "-i", "0.3", "--csv", csv]);
  const rowsNow = () => (existsSync(csv) ? readFileSync(csv, "utf8").split("\n").length - 2 : 0);
  const end = performance.now() + 10_000;
  while (rowsNow() < 6 && performance.now() < end) await sleep(50);
  c.kill();
  const f = await c.done;
  expect(f.signal, dump(f)).toBe("SIGKILL");
  const text = readFileSync(csv, "utf8");
  expect(text.endsWith("\n")).toBe(true);
  const [head, ...lines] = text.trimEnd().split("\n");
  expect(head).toBe("start_s,end_s,phase,stream,side,bytes,throughput_bps,packets,lost,transactions,transactions_per_second,p50_us,p99_us");
  const rows = lines.map((l) => l.split(","));
  for (const r of rows) expect(r).toHaveLength(13);
  // Each interval is published whole: its rows end with its SUM row, and the file ends with one.
  const sums = rows.filter((r) => r[3] === "SUM");
  expect(sums.length).toBeGreaterThanOrEqual(2);
  expect(rows.at(-1)![3]).toBe("SUM");
  expect(new Set(rows.map((r) => r[1])).size).toBe(sums.length);
  expect(sums.every((r) => Number(r[5]) > 0)).toBe(true);
}, 30_000);
