import { afterEach, expect, test } from "bun:test";
import { fakeSource } from "../../tests/fixtures/status/fake-run.ts";
import { pollStatus } from "./poll.ts";
import { startStatusServer, type StatusServer } from "./server.ts";

let server: StatusServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

test("polls at the asked rate and hands over each document", async () => {
  const { source, run } = fakeSource({ intervals: 100 });
  server = startStatusServer({ host: "127.0.0.1", port: 0, token: "t" }, source);
  const stepper = setInterval(() => run.step(), 50);
  const elapsed: number[] = [];
  const r = await pollStatus(server.url, { hz: 20, durationMs: 500, token: "t", onDocument: (d) => elapsed.push(d.test!.elapsedSeconds) });
  clearInterval(stepper);
  // 20 Hz for 0.5 s: 10 ticks, 11 when the last lands on the deadline; a loaded machine may lose a tick or two.
  expect(r.requests).toBeGreaterThanOrEqual(8);
  expect(r.requests).toBeLessThanOrEqual(11);
  expect(r.failures).toBe(0);
  expect(r.invalid).toBe(0);
  expect(r.latenciesMs).toHaveLength(r.requests);
  expect(elapsed).toHaveLength(r.requests);
  expect(elapsed.at(-1)!).toBeGreaterThan(elapsed[0]!);
});

test("a wrong token counts as failures, not documents", async () => {
  const { source } = fakeSource({ intervals: 3 });
  server = startStatusServer({ host: "127.0.0.1", port: 0, token: "right" }, source);
  const r = await pollStatus(server.url, { hz: 20, durationMs: 150, token: "wrong" });
  // 3 ticks in 150 ms at 20 Hz, give or take one on a loaded machine; every one of them fails.
  expect(r.requests).toBeGreaterThanOrEqual(2);
  expect(r.requests).toBeLessThanOrEqual(4);
  expect(r.failures).toBe(r.requests);
  expect(r.latenciesMs).toEqual([]);
});

test("stops when aborted", async () => {
  const { source } = fakeSource({ intervals: 3 });
  server = startStatusServer({ host: "127.0.0.1", port: 0 }, source);
  const r = await pollStatus(server.url, { hz: 10, durationMs: 60_000, signal: AbortSignal.timeout(250) });
  expect(r.requests).toBeLessThanOrEqual(4);
});
