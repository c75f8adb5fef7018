import { afterEach, expect, test } from "bun:test";
import { fakeSource } from "../../tests/fixtures/status/fake-run.ts";
import { createStatusApp } from "./app.ts";
import { holdReadiness, markReady, releaseStart, resetReadiness, waitForStart } from "./readiness.ts";

afterEach(resetReadiness);

test("/healthz and /readyz answer without the token and carry no test data", async () => {
  const { source, run } = fakeSource({ intervals: 4 });
  run.step();
  const app = createStatusApp(source, { token: "s3cret" });
  expect((await app.request("/status")).status).toBe(401);
  const health = await app.request("/healthz");
  expect(health.status).toBe(200);
  expect(await health.text()).toBe("ok\n");
  const ready = await app.request("/readyz");
  expect(ready.status).toBe(200);
  expect(await ready.text()).toBe("ready\n");
});

test("/readyz is 503 while readiness is held (serve binding its listeners), 200 once marked", async () => {
  const app = createStatusApp(fakeSource({ intervals: 1 }).source);
  holdReadiness();
  const before = await app.request("/readyz");
  expect(before.status).toBe(503);
  expect(await before.json()).toEqual({ error: "not ready: listeners still starting" });
  markReady();
  expect((await app.request("/readyz")).status).toBe(200);
});

test("POST /start releases a paused wait once, needs the token, and is 409 when nothing waits", async () => {
  const app = createStatusApp(fakeSource({ intervals: 1 }).source, { token: "s3cret" });
  const auth = { method: "POST", headers: { Authorization: "Bearer s3cret" } };
  expect((await app.request("/start", auth)).status).toBe(409);
  const started = waitForStart(new AbortController().signal);
  expect((await app.request("/start", { method: "POST" })).status).toBe(401);
  const res = await app.request("/start", auth);
  expect(res.status).toBe(200);
  expect(await res.json()).toEqual({ started: true });
  expect(await started).toBe(true);
  expect(releaseStart()).toBe(false);
});

test("Ctrl+C during a paused wait resolves it as not started", async () => {
  const ctl = new AbortController();
  const waiting = waitForStart(ctl.signal);
  ctl.abort();
  expect(await waiting).toBe(false);
  expect(releaseStart()).toBe(false);
});
