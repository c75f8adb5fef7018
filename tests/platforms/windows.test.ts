import { beforeAll, describe, expect, test } from "bun:test";
import { Results } from "../../src/report/result.ts";
import { buildTarget, windowsMissing, wineHost, type WineHost } from "./targets.ts";

// Ports 38100-38199: the Windows exe's pairings.
let host: WineHost;
beforeAll(() => {
  if (!windowsMissing) host = wineHost(buildTarget("windows-x64"));
}, 120_000);

function runExe(args: string[], limitMs = 90_000) {
  const p = Bun.spawn(host.command(args), { env: host.env, stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => p.kill(), limitMs);
  return Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]).then(([stdout, stderr, code]) => {
    clearTimeout(timer);
    return { stdout, stderr, code };
  });
}

describe.skipIf(windowsMissing !== undefined)(`windows-x64 exe under Wine${windowsMissing ? ` (skipped: ${windowsMissing})` : ""}`, () => {
  test("loopback TCP: Workers start, bytes move, CPU modes come from the Windows counters", async () => {
    const r = await runExe(["loopback", "-t", "1", "-P", "1", "--json"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const doc = Results.parse(JSON.parse(r.stdout));
    expect(doc.summary.bytes).toBeGreaterThan(0);
    expect(doc.totals.sent_bytes).toBeGreaterThanOrEqual(doc.summary.bytes);
    expect(doc.cpu.busy_percent).toBeGreaterThan(0);
    expect(doc.cpu.process_percent).toBeGreaterThan(0);
    expect(doc.cpu.host?.perCpu?.length ?? 0).toBeGreaterThan(0);
  }, 120_000);

  test("loopback UDP and TCP_RR", async () => {
    const udp = Results.parse(JSON.parse((await runExe(["loopback", "-t", "1", "-P", "1", "-u", "-b", "50M", "--json"])).stdout));
    expect(udp.summary.packets).toBeGreaterThan(0);
    const rr = Results.parse(JSON.parse((await runExe(["loopback", "-t", "1", "-P", "1", "--rr", "1,1", "--json"])).stdout));
    expect(rr.summary.transactions).toBeGreaterThan(0);
    expect(rr.summary.latency_us?.p99).toBeGreaterThan(0);
  }, 120_000);

  test("text report says n/a for what Windows does not count, never 0", async () => {
    const r = await runExe(["loopback", "-t", "1", "-P", "1"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/TCP retransmits n\/a/);
    expect(r.stdout).not.toMatch(/host busy n\/a/);
  }, 120_000);
});
