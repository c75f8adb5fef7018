import { expect, test } from "bun:test";
import { MAX_TIMER_MS, timerDelay } from "./timer-delay.ts";

test("a deadline within setTimeout's range is waited for exactly", () => {
  expect(timerDelay(1500, 1000)).toBe(500);
  expect(timerDelay(1000 + MAX_TIMER_MS, 1000)).toBe(MAX_TIMER_MS);
});

test("a deadline past setTimeout's range is capped, never 1 ms", () => {
  // netperf -l 2147483647 from a peer: a deadline 2^31 s away (found by tests/abuse/netserver.test.ts).
  expect(timerDelay(2 ** 31 * 1000, 0)).toBe(MAX_TIMER_MS);
  expect(timerDelay(Number.POSITIVE_INFINITY, 0)).toBe(MAX_TIMER_MS);
});

test("a deadline already passed (or not a number) fires at once", () => {
  expect(timerDelay(10, 20)).toBe(0);
  expect(timerDelay(Number.NaN, 0)).toBe(0);
});

test("a capped timer really waits instead of firing at once", async () => {
  let fired = false;
  const t = setTimeout(() => (fired = true), timerDelay(2 ** 40, 0));
  await Bun.sleep(30);
  clearTimeout(t);
  expect(fired).toBe(false);
});
