import { beforeAll, describe, expect, test } from "bun:test";
import { Results } from "../../src/report/result.ts";
import { hasTool, spawnProc, waitBound } from "../support/processes.ts";
import { linuxTotalBytes } from "../interop/ntttcp-harness.ts";
import { arm64Command, arm64Missing, buildTarget } from "./targets.ts";

// Ports 38000-38099: the arm64 binary's pairings.
let bin = "";
beforeAll(() => {
  if (!arm64Missing) bin = buildTarget("linux-arm64");
});
const run = (args: string[], limitMs = 60_000) => spawnProc(arm64Command(bin, args), limitMs).done;

describe.skipIf(arm64Missing !== undefined)(`linux-arm64 binary under qemu-user${arm64Missing ? ` (skipped: ${arm64Missing})` : ""}`, () => {
  test("loopback self-test: one results document with bytes and host CPU", async () => {
    const r = await run(["loopback", "-t", "1", "-P", "1", "--json"]);
    expect(r.code).toBe(0);
    const doc = Results.parse(JSON.parse(r.stdout));
    expect(doc.summary.bytes).toBeGreaterThan(0);
    expect(doc.cpu.busy_percent).toBeDefined();
  }, 90_000);

  test.skipIf(!hasTool(["iperf3", "--version"], /iperf 3/))("iperf3 -c against stock iperf3 -s", async () => {
    const server = spawnProc(["iperf3", "-s", "-1", "-p", "38001"], 60_000);
    await waitBound(38001);
    const r = await run(["iperf3", "-c", "127.0.0.1", "-p", "38001", "-t", "1", "-J"]);
    server.kill();
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as { end: { sum_received: { bytes: number } } };
    expect(doc.end.sum_received.bytes).toBeGreaterThan(0);
  }, 90_000);

  test.skipIf(!hasTool(["iperf", "-v"], /iperf version 2/))("iperf -c against stock iperf -s", async () => {
    const server = spawnProc(["iperf", "-s", "-p", "38002"], 60_000);
    await waitBound(38002);
    const r = await run(["iperf", "-c", "127.0.0.1", "-p", "38002", "-t", "1", "-y", "C"]);
    server.kill();
    expect(r.code).toBe(0);
    const bytes = Number(r.stdout.trim().split("\n").at(-1)?.split(",")[7]);
    expect(bytes).toBeGreaterThan(0);
  }, 90_000);

  test.skipIf(!hasTool(["netperf", "-V"], /2\.7/))("netperf TCP_RR against stock netserver", async () => {
    const server = spawnProc(["netserver", "-D", "-p", "38003"], 60_000);
    await waitBound(38003);
    const r = await run(["netperf", "-H", "127.0.0.1", "-p", "38003", "-l", "1", "-t", "TCP_RR", "-P", "0", "--", "-r", "1,1"]);
    server.kill();
    expect(r.code).toBe(0);
    const rate = Number(r.stdout.trim().split(/\s+/).at(-1));
    expect(rate).toBeGreaterThan(0);
  }, 90_000);

  test("ntttcp: the arm64 receiver takes the x64 build's sync-mode sender, bytes agree", async () => {
    const receiver = spawnProc(arm64Command(bin, ["ntttcp", "-r127.0.0.1", "-p", "38010", "-P", "1", "-t", "2"]), 60_000);
    // The sync port (base − 1) is bound last.
    await waitBound(38009, "tcp", 30_000);
    const sender = await spawnProc([new URL("../../dist/anyperf", import.meta.url).pathname, "ntttcp", "-s127.0.0.1", "-p", "38010", "-P", "1", "-t", "2"], 60_000).done;
    const rx = await receiver.done;
    expect(sender.code).toBe(0);
    expect(rx.code).toBe(0);
    expect(linuxTotalBytes(rx.stdout)).toBeGreaterThan(0);
  }, 90_000);
});
