/**
 * flent (Debian's 2.1.1, scripts/install-peers) against our netserver and the stock one: its RRUL test (4 TCP
 * uploads, 4 downloads and 3 UDP_RR "pings", with demo-mode interim results, netperf -D), tcp_download, tcp_nup with
 * four uploads and ping (UDP_RR beside ICMP); rrul again against `anyperf serve`. Every
 * series flent draws from ours has its data as from the stock netserver: the same series, as many points, figures
 * above zero. Figures are compared in docs/PERFORMANCE.md, not here (no timed tests).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePorts } from "../support/processes.ts";
import { hasStockNetperf, netserverPair, oursServeNetserver, waitListening, type Proc } from "./netperf-harness.ts";
import { type FlentSeries, flentSummary } from "../../bench/peer-output.ts";

const hasFlent = (() => {
  try {
    return Bun.spawnSync(["flent", "--version"], { stdout: "pipe", stderr: "pipe" }).exitCode === 0;
  } catch {
    return false;
  }
})();
const runs = hasFlent && hasStockNetperf();
const [STOCK, OURS, SERVE] = [freePorts(28200, 28220, 1), freePorts(28220, 28240, 1), freePorts(28240, 28260, 2)];
netserverPair(STOCK, OURS, runs);
let serve: Proc | undefined;
beforeAll(async () => {
  if (!runs) return;
  serve = oursServeNetserver(SERVE);
  await waitListening(SERVE, 15_000);
});
afterAll(async () => {
  serve?.kill();
  await serve?.done;
});

async function flent(test: string, port: number): Promise<Map<string, FlentSeries>> {
  const dir = mkdtempSync(join(tmpdir(), "anyperf-flent-"));
  const [name, ...params] = test.split(" ");
  try {
    const argv = ["flent", name!, ...params, "-H", "127.0.0.1", "--netperf-control-port", String(port), "-l", "4", "-D", dir, "-f", "summary"];
    const p = Bun.spawn(argv, { stdout: "pipe", stderr: "pipe" });
    const timer = setTimeout(() => p.kill(), 60_000);
    const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
    clearTimeout(timer);
    expect(await p.exited, `${out}\n${err}`).toBe(0);
    expect(`${out}\n${err}`).not.toMatch(/ERROR|WARNING: .*(failed|no data)/i);
    return flentSummary(out);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe.skipIf(!runs)("flent against our netserver and serve, beside the stock netserver", () => {
  // udp_flood is not here: flent 2.1.1 runs it with an iperf 2 whose help names --enhancedreports (2.0.x), which no
  // iperf Debian ships has, so it fails before any server is asked, the stock netserver's too.
  const cases: [string, number][] = [
    ["rrul", OURS],
    ["tcp_download", OURS],
    ["tcp_nup --test-parameter upload_streams=4", OURS],
    ["ping", OURS],
    ["rrul", SERVE],
  ];
  // One stock run per test name: serve's rrul is held to the same stock series as our netserver's.
  const stockRuns = new Map<string, Promise<Map<string, FlentSeries>>>();
  for (const [name, port] of cases) {
    const server = port === SERVE ? "anyperf serve --netserver" : "anyperf netserver";
    test(`${name} against ${server}: every series the stock netserver gives, with as many points, above zero`, async () => {
      if (!stockRuns.has(name)) stockRuns.set(name, flent(name, STOCK));
      const stock = await stockRuns.get(name)!;
      const ours = await flent(name, port);
      expect(stock.size).toBeGreaterThan(1);
      expect([...ours.keys()].sort()).toEqual([...stock.keys()].sort());
      for (const [series, s] of stock) {
        const o = ours.get(series)!;
        // flent samples every 0.2 s; a series may miss a sample at either end.
        expect(o.points, series).toBeGreaterThanOrEqual(s.points - 2);
        expect(o.avg, series).toBeGreaterThan(0);
      }
    }, 120_000);
  }
});
