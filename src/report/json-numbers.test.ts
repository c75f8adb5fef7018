/** --json figures rounded to what they mean (issue 29 item 7), on a recorded client run (src/testdata/report/). */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { jsonDocument } from "./json-numbers.ts";
import { Results } from "./result.ts";

const raw = JSON.parse(readFileSync(join(import.meta.dir, "..", "testdata", "report", "client-bidir.json"), "utf8")) as Record<string, unknown>;

/** Every number of a document with the key it sits under. */
function numbers(o: unknown, key = "", out: [string, number][] = []): [string, number][] {
  if (typeof o === "number") out.push([key, o]);
  else if (Array.isArray(o)) for (const v of o) numbers(v, key, out);
  else if (o !== null && typeof o === "object") for (const [k, v] of Object.entries(o)) numbers(v, k, out);
  return out;
}

const decimals = (v: number) => (Number.isInteger(v) ? 0 : String(v).split(".")[1]!.length);

test("bytes and bits/s are whole, percents have at most two decimals, and each moved by less than its rounding", () => {
  const before = numbers(raw);
  // The recorded run carries the noise the issue saw (bdp_bytes 335257.9167, mode_percent 56.99999999999999).
  expect(before.some(([k, v]) => k === "bdp_bytes" && !Number.isInteger(v))).toBe(true);
  expect(before.some(([k, v]) => k.endsWith("percent") && decimals(v) > 2)).toBe(true);
  const after = numbers(JSON.parse(jsonDocument(raw)));
  expect(after.map(([k]) => k)).toEqual(before.map(([k]) => k));
  after.forEach(([k, v], i) => {
    const was = before[i]![1];
    if (/bytes$|_bps$/.test(k)) {
      expect(Number.isInteger(v)).toBe(true);
      expect(Math.abs(v - was)).toBeLessThanOrEqual(0.5);
    }
    if (/percent$/.test(k) || ["user", "system", "softirq", "idle", "busy"].includes(k)) {
      expect(decimals(v)).toBeLessThanOrEqual(2);
      expect(Math.abs(v - was)).toBeLessThanOrEqual(0.005 + 1e-9);
    }
  });
  // Still a results document, indented as before.
  expect(Results.safeParse(JSON.parse(jsonDocument(raw))).success).toBe(true);
  expect(jsonDocument({ a: 1 })).toBe('{\n  "a": 1\n}');
});

test("a statistic of one quantity is rounded in that quantity's unit (--repeat's aggregate, latency percentiles)", () => {
  const doc = JSON.parse(jsonDocument({
    aggregate: { throughput_bps: { n: 3, median: 24078659473.260124, min: 19551775166.055946, max: 34486879557.00893, spread_percent: 62.02631175438609 } },
    latency_us: { p50: 28.123456, max: 1002.5049 },
    at: new Date(0),
    cpu: { host: { perCpu: [{ user: 12.345678 }] } },
    label: 1.23456789,
  })) as Record<string, unknown>;
  expect(doc).toEqual({
    aggregate: { throughput_bps: { n: 3, median: 24078659473, min: 19551775166, max: 34486879557, spread_percent: 62.03 } },
    latency_us: { p50: 28.12, max: 1002.5 },
    at: "1970-01-01T00:00:00.000Z",
    cpu: { host: { perCpu: [{ user: 12.35 }] } },
    label: 1.23456789,
  });
});
