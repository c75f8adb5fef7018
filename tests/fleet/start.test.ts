/**
 * Issue 18 item 4: clients started seconds apart measure together. Two `anyperf client --start-at T` launched 1.5 s
 * apart both start at T; a `--paused` client waits for POST /start on its status endpoint. Ports 40700-40799 (free ones picked: the range is ephemeral too).
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { Results } from "../../src/report/result.ts";
import { freePorts, sleep, spawnProc, waitFor } from "../support/processes.ts";

const MAIN = join(import.meta.dir, "..", "..", "main.ts");
const BUN = process.execPath;
const BASE = freePorts(40700, 40800, 2);
const [NATIVE, HTTP] = [BASE, BASE + 1];

async function withServe(run: () => Promise<void>): Promise<void> {
  const serve = spawnProc([BUN, MAIN, "serve", "-B", "127.0.0.1", "-p", `${NATIVE}`, "--iperf3", "off", "--iperf", "off", "--netserver", "off", "--ntttcp", "off"], 90_000);
  try {
    await waitFor(serve.stdout, /anyperf on 127\.0\.0\.1/);
    await run();
  } finally {
    serve.kill("SIGINT");
    await serve.done;
  }
}

// Bounds leave room for connect + handshake on a loaded 2-core host (305 ms seen); launched 1.5 s apart and
// started at once, the clients would miss both by far.
test("--start-at: two clients launched 1.5 s apart start within 1 s after T and 500 ms of each other", async () => {
  await withServe(async () => {
    const at = new Date(Math.ceil((Date.now() + 4000) / 1000) * 1000);
    const argv = [BUN, MAIN, "client", "127.0.0.1", "-p", `${NATIVE}`, "-t", "1", "--json", "--start-at", at.toISOString()];
    const first = spawnProc(argv, 30_000);
    await sleep(1500);
    const second = spawnProc(argv, 30_000);
    const [a, b] = await Promise.all([first.done, second.done]);
    expect(a.code).toBe(0);
    expect(b.code).toBe(0);
    expect(a.stderr).toContain(`waiting until ${at.toISOString()}`);
    const starts = [a, b].map((r) => Date.parse(Results.parse(JSON.parse(r.stdout)).started_at));
    for (const s of starts) {
      expect(s).toBeGreaterThanOrEqual(at.getTime());
      expect(s - at.getTime()).toBeLessThan(1000);
    }
    expect(Math.abs(starts[0]! - starts[1]!)).toBeLessThan(500);
  });
}, 60_000);

test("--start-at in the past or malformed: one line, exit 2, nothing connects", async () => {
  const past = await spawnProc([BUN, MAIN, "client", "127.0.0.1", "-p", `${NATIVE}`, "--start-at", new Date(Date.now() - 5000).toISOString()]).done;
  expect(past.code).toBe(2);
  expect(past.stderr.trim().split("\n")).toHaveLength(1);
  expect(past.stderr).toMatch(/^anyperf: --start-at \S+: that was \d+\.\d s ago; pass a time in the future \(check this host's clock\)\n$/);
});

test("--paused waits for POST /start (token-protected), then runs; without --http it is refused", async () => {
  await withServe(async () => {
    const client = spawnProc([BUN, MAIN, "client", "127.0.0.1", "-p", `${NATIVE}`, "-t", "1", "--json", "--paused", "--http", `${HTTP}`, "--http-token", "go"], 40_000);
    await waitFor(client.stderr, /paused: POST \/start/);
    await sleep(1000);
    // Still waiting: nothing has connected or started.
    const before = await (await fetch(`http://127.0.0.1:${HTTP}/status`, { headers: { Authorization: "Bearer go" } })).json();
    expect(before.test).toBeNull();
    expect((await fetch(`http://127.0.0.1:${HTTP}/start`, { method: "POST" })).status).toBe(401);
    const t0 = Date.now();
    expect((await fetch(`http://127.0.0.1:${HTTP}/start`, { method: "POST", headers: { Authorization: "Bearer go" } })).status).toBe(200);
    const out = await client.done;
    expect(out.code).toBe(0);
    const r = Results.parse(JSON.parse(out.stdout));
    expect(Date.parse(r.started_at)).toBeGreaterThanOrEqual(t0 - 50);
    expect(r.summary.bytes).toBeGreaterThan(0);
  });
  const alone = await spawnProc([BUN, MAIN, "client", "127.0.0.1", "-p", `${NATIVE}`, "--paused"]).done;
  expect(alone.code).toBe(2);
  expect(alone.stderr).toBe("anyperf: --paused without --http: add --http [ADDR:]PORT so POST /start can reach this client\n");
}, 60_000);
