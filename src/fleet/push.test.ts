import { afterAll, expect, test } from "bun:test";
import { Results } from "../report/result.ts";
import { freePorts } from "../../tests/support/processes.ts";
import { checkPushUrl, pushResults, pushgatewayUrl, resultsExposition } from "./push.ts";

const RESULTS = Results.parse({
  tool: "anyperf",
  version: "0.0.0",
  mode: "client",
  role: "sender",
  peer: "127.0.0.1:5200",
  transport: "udp",
  test: "stream",
  started_at: "2026-12-03T12:00:00.000Z",
  labels: { node: "worker-1" },
  interrupted: false,
  phases: { warmup_s: 0, measured_s: 2, cooldown_s: 0 },
  summary: { bytes: 2_500_000, seconds: 2, throughput_bps: 10_000_000, packets_per_second: 1000, lost: 7 },
  totals: {},
  streams: [],
  intervals: [],
  cpu: {},
  errors: [],
});

test("the final figures in base units, with --label and the test's identity on each", () => {
  const text = resultsExposition(RESULTS);
  const l = '{node="worker-1",dialect="native",role="sender",peer="127.0.0.1"}';
  expect(text).toContain(`anyperf_average_throughput_bytes_per_second${l} 1250000\n`);
  expect(text).toContain(`anyperf_bytes_total${l} 2500000\n`);
  expect(text).toContain(`anyperf_measured_seconds${l} 2\n`);
  expect(text).toContain(`anyperf_packets_per_second${l} 1000\n`);
  expect(text).toContain(`anyperf_lost_packets_total${l} 7\n`);
  expect(text).toContain(`anyperf_test_start_time_seconds${l} ${Date.parse("2026-12-03T12:00:00Z") / 1000}\n`);
  expect(text).toContain("# TYPE anyperf_bytes_total counter\n");
  expect(text).not.toContain("transactions");
  expect(text).not.toContain("retransmits");
});

test("grouping key: pod, else node, else the host name, then the other labels; URLs checked before the test", () => {
  expect(pushgatewayUrl("http://127.0.0.1:9091/", { pod: "p-1", node: "n" }, "h")).toBe("http://127.0.0.1:9091/metrics/job/anyperf/instance/p-1/node/n");
  expect(pushgatewayUrl("http://127.0.0.1:9091", { node: "n/1" }, "h")).toBe("http://127.0.0.1:9091/metrics/job/anyperf/instance@base64/bi8x");
  // A fleet Job's pod labels each pair: one group per pair.
  expect(pushgatewayUrl("http://pg:9091", { sender: "node-a", receiver: "node-b" }, "fleet-0")).toBe("http://pg:9091/metrics/job/anyperf/instance/fleet-0/receiver/node-b/sender/node-a");
  expect(pushgatewayUrl("http://127.0.0.1:9091", {}, "box")).toBe("http://127.0.0.1:9091/metrics/job/anyperf/instance/box");
  expect(() => checkPushUrl("--push", "collector:8080")).toThrow("--push collector:8080: not an http:// or https:// URL");
  expect(() => checkPushUrl("--pushgateway", "ftp://x")).toThrow("--pushgateway ftp://x: not an http:// or https:// URL");
  expect(checkPushUrl("--push", "http://127.0.0.1:1/r").port).toBe("1");
});

const PORT = freePorts(40900, 41000, 2);
// A receiver that answers each request from a script: status codes in order, then 200.
const script: number[] = [];
const seen: { method: string; body: string; at: number }[] = [];
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: PORT,
  fetch: async (req) => {
    seen.push({ method: req.method, body: await req.text(), at: Date.now() });
    return new Response(script.length ? "busy" : "ok", { status: script.shift() ?? 200 });
  },
});
afterAll(() => server.stop(true));
const URL_OK = `http://127.0.0.1:${PORT}/results`;

test("--push: a 503 twice is retried with growing backoff, then delivered as JSON", async () => {
  seen.length = 0;
  script.push(503, 503);
  expect(await pushResults({ push: URL_OK }, RESULTS, 50)).toEqual([]);
  expect(seen).toHaveLength(3);
  expect(seen.every((s) => s.method === "POST")).toBe(true);
  expect(Results.parse(JSON.parse(seen[2]!.body))).toEqual(RESULTS);
  expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(45);
  expect(seen[2]!.at - seen[1]!.at).toBeGreaterThanOrEqual(95);
});

test("--push: a refusal (4xx) is not retried; a receiver that stays down fails after 3 retries, one line each", async () => {
  seen.length = 0;
  script.push(400);
  expect(await pushResults({ push: URL_OK }, RESULTS, 10)).toEqual([`--push ${URL_OK}: results not delivered (HTTP 400 busy); check the URL and that the receiver is up`]);
  expect(seen).toHaveLength(1);
  seen.length = 0;
  script.push(500, 500, 500, 500);
  const [line] = await pushResults({ push: URL_OK }, RESULTS, 10);
  expect(seen).toHaveLength(4);
  expect(line).toBe(`--push ${URL_OK}: results not delivered (HTTP 500 busy); check the URL and that the receiver is up`);
  const down = await pushResults({ pushgateway: `http://127.0.0.1:${PORT + 1}` }, RESULTS, 10);
  expect(down).toHaveLength(1);
  expect(down[0]).toMatch(new RegExp(`^--pushgateway http://127\\.0\\.0\\.1:${PORT + 1}: figures not delivered to http://127\\.0\\.0\\.1:${PORT + 1}/metrics/job/anyperf/instance/worker-1 \\(.+\\); check the URL and that the Pushgateway is up$`));
});
