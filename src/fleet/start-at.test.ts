import { expect, test } from "bun:test";
import { parseStartAt, waitUntil } from "./start-at.ts";

const NOW = Date.parse("2026-12-03T12:00:00Z");

test("RFC 3339 with an explicit zone, fractions allowed", () => {
  expect(parseStartAt("2026-12-03T12:00:10Z", NOW)).toBe(NOW + 10_000);
  expect(parseStartAt("2026-12-03T13:00:10.250+01:00", NOW)).toBe(NOW + 10_250);
  expect(parseStartAt("2026-12-03 12:00:05z", NOW)).toBe(NOW + 5_000);
  // Up to a second late is a slow scheduler, not a mistake.
  expect(parseStartAt("2026-12-03T11:59:59.500Z", NOW)).toBe(NOW - 500);
});

test("malformed, more than a second past, or more than a day ahead: one line naming --start-at", () => {
  expect(() => parseStartAt("2026-12-03T12:00:10", NOW)).toThrow("--start-at 2026-12-03T12:00:10: not an RFC 3339 time");
  expect(() => parseStartAt("tomorrow", NOW)).toThrow("not an RFC 3339 time");
  expect(() => parseStartAt("2026-12-03T11:59:58Z", NOW)).toThrow("that was 2.0 s ago; pass a time in the future");
  expect(() => parseStartAt("2026-12-04T12:00:01Z", NOW)).toThrow("more than 24 h ahead");
  expect(parseStartAt("2026-12-04T12:00:00Z", NOW)).toBe(NOW + 86_400_000);
});

test("waitUntil resolves at the instant, or false at once on Ctrl+C", async () => {
  const t0 = Date.now();
  expect(await waitUntil(t0 + 200, new AbortController().signal)).toBe(true);
  expect(Date.now() - t0).toBeGreaterThanOrEqual(195);
  const ctl = new AbortController();
  const waiting = waitUntil(Date.now() + 60_000, ctl.signal);
  ctl.abort();
  expect(await waiting).toBe(false);
});
