import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Results } from "../../src/report/result.ts";
import { anyperf, dump, interruptAfter, scratch, tempLeftovers } from "./harness.ts";

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
