/**
 * Issue 18 item 5 through main.ts: a finished run's results outlive it. --push POSTs the results document to a small
 * HTTP server of this test; --pushgateway PUTs the final figures to a real prometheus-pushgateway (Debian package,
 * skipped when absent) on loopback, where they read back equal to the run's own --json. Ports 40800-40899 (free ones picked: the range is ephemeral too).
 */
import { afterAll, expect, test } from "bun:test";
import { join } from "node:path";
import { Results } from "../../src/report/result.ts";
import { pushResults } from "../../src/fleet/push.ts";
import { freePorts, hasTool, spawnProc, waitBound } from "../support/processes.ts";

const MAIN = join(import.meta.dir, "..", "..", "main.ts");
const BUN = process.execPath;
const BASE = freePorts(40800, 40900, 3);
const [RECEIVER, GATEWAY, CLOSED] = [BASE, BASE + 1, BASE + 2];
const PUSHGATEWAY = "prometheus-pushgateway";
const haveGateway = hasTool([PUSHGATEWAY, "--version"], /pushgateway/i);

const received: { method: string; type: string | null; body: string }[] = [];
const receiver = Bun.serve({
  hostname: "127.0.0.1",
  port: RECEIVER,
  fetch: async (req) => {
    received.push({ method: req.method, type: req.headers.get("content-type"), body: await req.text() });
    return new Response(null, { status: 204 });
  },
});
afterAll(() => receiver.stop(true));

test("loopback --push: the receiver gets the same results document as --json, labels included", async () => {
  const out = await spawnProc([BUN, MAIN, "loopback", "-t", "1", "-P", "1", "--json", "--label", "node=w1", "--push", `http://127.0.0.1:${RECEIVER}/anyperf`], 40_000).done;
  expect(out.stderr).toBe("");
  expect(out.code).toBe(0);
  expect(received).toHaveLength(1);
  expect(received[0]!.method).toBe("POST");
  expect(received[0]!.type).toBe("application/json");
  const pushed = Results.parse(JSON.parse(received[0]!.body));
  expect(pushed).toEqual(Results.parse(JSON.parse(out.stdout)));
  expect(pushed.labels).toEqual({ node: "w1" });
}, 60_000);

test("--push to a closed port: results still printed, then one line naming --push, exit 1", async () => {
  const url = `http://127.0.0.1:${CLOSED}/x`;
  const out = await spawnProc([BUN, MAIN, "loopback", "-t", "1", "-P", "1", "--json", "--push", url], 60_000).done;
  expect(out.code).toBe(1);
  expect(Results.parse(JSON.parse(out.stdout)).summary.bytes).toBeGreaterThan(0);
  const lines = out.stderr.trim().split("\n");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(new RegExp(`^anyperf: --push ${url}: results not delivered \\(.+\\); check the URL and that the receiver is up$`));
}, 60_000);

test("a URL that is not http(s) is refused before the test", async () => {
  const out = await spawnProc([BUN, MAIN, "loopback", "-t", "1", "--pushgateway", "127.0.0.1:9091"]).done;
  expect(out.code).toBe(2);
  expect(out.stderr).toBe("anyperf: --pushgateway 127.0.0.1:9091: not an http:// or https:// URL; pass e.g. --pushgateway http://collector:9091\n");
  expect(out.stdout).toBe("");
});

test.skipIf(!haveGateway)("--pushgateway: a real Pushgateway holds the run's final figures under job anyperf, instance = the node label", async () => {
  const gw = spawnProc([PUSHGATEWAY, `--web.listen-address=127.0.0.1:${GATEWAY}`], 90_000);
  try {
    await waitBound(GATEWAY);
    const out = await spawnProc(
      [BUN, MAIN, "loopback", "-t", "1", "-P", "2", "--json", "--label", "node=worker-1", "--pushgateway", `http://127.0.0.1:${GATEWAY}`],
      40_000,
      { POD_NAME: "ignored-when-labelled" },
    ).done;
    expect(out.stderr).toBe("");
    expect(out.code).toBe(0);
    const r = Results.parse(JSON.parse(out.stdout));
    const text = await (await fetch(`http://127.0.0.1:${GATEWAY}/metrics`)).text();
    const value = (name: string) => {
      const line = text.split("\n").find((l) => l.startsWith(`${name}{`) && l.includes('job="anyperf"'));
      expect(line).toBeDefined();
      expect(line).toContain('instance="worker-1"');
      expect(line).toContain('node="worker-1"');
      expect(line).toContain('dialect="loopback"');
      return Number(line!.slice(line!.lastIndexOf(" ") + 1));
    };
    expect(value("anyperf_average_throughput_bytes_per_second")).toBeCloseTo(r.summary.throughput_bps / 8, 0);
    expect(value("anyperf_bytes_total")).toBe(r.summary.bytes);
    expect(value("anyperf_measured_seconds")).toBeCloseTo(r.summary.seconds, 6);
    expect(text).toMatch(/push_time_seconds\{[^}]*instance="worker-1"[^}]*job="anyperf"[^}]*\} \S+/);
  } finally {
    gw.kill();
    await gw.done;
  }
}, 90_000);

test.skipIf(!haveGateway)("--pushgateway: one pod's pairs (sender, receiver labels) stay side by side in a real Pushgateway", async () => {
  const gw = spawnProc([PUSHGATEWAY, `--web.listen-address=127.0.0.1:${GATEWAY}`], 90_000);
  try {
    await waitBound(GATEWAY);
    const pair = (receiver: string, bytes: number) =>
      Results.parse({
        tool: "anyperf", version: "0.0.0", mode: "client", role: "client", peer: "10.0.0.2:5300", transport: "tcp", test: "stream",
        started_at: "2026-12-03T12:00:00.000Z", labels: { sender: "node-a", receiver }, interrupted: false,
        phases: { warmup_s: 0, measured_s: 1, cooldown_s: 0 }, summary: { bytes, seconds: 1, throughput_bps: bytes * 8 },
        totals: {}, streams: [], intervals: [], cpu: {}, errors: [],
      });
    expect(await pushResults({ pushgateway: `http://127.0.0.1:${GATEWAY}` }, pair("node-b", 1000))).toEqual([]);
    expect(await pushResults({ pushgateway: `http://127.0.0.1:${GATEWAY}` }, pair("node-c", 2000))).toEqual([]);
    const text = await (await fetch(`http://127.0.0.1:${GATEWAY}/metrics`)).text();
    const bytes = text.split("\n").filter((l) => l.startsWith("anyperf_bytes_total{") && l.includes('sender="node-a"'));
    expect(bytes).toHaveLength(2);
    expect(bytes.find((l) => l.includes('receiver="node-b"'))).toEndWith(" 1000");
    expect(bytes.find((l) => l.includes('receiver="node-c"'))).toEndWith(" 2000");
    for (const l of bytes) expect(l).toContain('dialect="native"');
  } finally {
    gw.kill();
    await gw.done;
  }
}, 90_000);

test("--push with --repeat is refused before any run: it sends one run's results", async () => {
  const out = await spawnProc([BUN, MAIN, "loopback", "-t", "1", "--repeat", "2", "--push", `http://127.0.0.1:${RECEIVER}/x`]).done;
  expect(out.code).toBe(2);
  expect(out.stderr).toBe("anyperf: --push sends one run's results: drop it with --repeat/--sweep (the history keeps every run)\n");
});
