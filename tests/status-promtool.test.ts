import { describe, expect, test } from "bun:test";
import { createStatusApp } from "../src/status/app.ts";
import { MemorySource } from "../src/status/memory-source.ts";
import type { StatusSource } from "../src/status/source.ts";
import { TestRunSource } from "../src/status/test-run-source.ts";
import { fakeSource } from "./fixtures/status/fake-run.ts";
import { StandIn, tcp, tcpInterval } from "./fixtures/status/stand-in-run.ts";

/** promtool comes with Debian's `prometheus` package; CI installs it (scripts/install-peers). */
const promtool = Bun.which("promtool");
if (!promtool) console.warn("status-promtool: SKIPPED, promtool not found: apt-get install prometheus");

async function check(text: string): Promise<{ code: number; out: string }> {
  const p = Bun.spawn([promtool!, "check", "metrics"], { stdin: new TextEncoder().encode(text), stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => p.kill(), 20_000);
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  clearTimeout(timer);
  return { code, out: out + err };
}

async function metricsOf(source: StatusSource): Promise<string> {
  const res = await createStatusApp(source).request("/metrics");
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
  return res.text();
}

describe.skipIf(!promtool)("promtool check metrics", () => {
  test("it can fail: a counter without _total and a millisecond name are reported", async () => {
    const r = await check("# HELP x_ms a\n# TYPE x_ms counter\nx_ms 1\n");
    expect(r.code).not.toBe(0);
    expect(r.out).toContain("x_ms");
  });

  const cases: [string, () => StatusSource][] = [
    ["no test yet", () => new MemorySource({ mode: "netserver", role: "server", persistent: true })],
    ["TCP bulk, measuring", () => {
      const { source, run } = fakeSource({ intervals: 5 });
      run.step();
      run.step();
      return source;
    }],
    ["request/response, done", () => {
      const { source, run } = fakeSource({ intervals: 2, rr: true, mode: "netperf", role: "client" });
      run.step();
      run.step();
      return source;
    }],
    ["UDP, server between tests", () => {
      const { source, run } = fakeSource({ intervals: 1, udp: true, mode: "iperf3", role: "server", persistent: true });
      run.step();
      return source;
    }],
    ["warm-up, nothing moved yet, odd label text", () => fakeSource({ intervals: 3, mode: 'a"b\\c\nd' }).source],
    ["engine run with send and recv streams (side labels), live CPU", () => {
      const source = new TestRunSource({ mode: "loopback", role: "both" });
      const run = new StandIn(tcp);
      source.add(run);
      run.setPhase("measuring");
      run.interval(tcpInterval("measuring", 5000));
      return source;
    }],
  ];
  test.each(cases)("%s: clean", async (_name, make) => {
    const r = await check(await metricsOf(make()));
    expect(r.out).toBe("");
    expect(r.code).toBe(0);
  });
});
