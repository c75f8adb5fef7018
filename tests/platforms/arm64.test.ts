import { beforeAll, describe, expect, test } from "bun:test";
import { Results } from "../../src/report/result.ts";
import { freePorts, hasTool, spawnProc, waitBound } from "../support/processes.ts";
import { stockIperf3Runs, stockIperfRun } from "./stock-clients.ts";
import { linuxTotalBytes } from "../interop/ntttcp-harness.ts";
import { arm64Command, arm64Missing, buildTarget } from "./targets.ts";

// Ports 38000-38099: the arm64 binary's pairings, free ones picked at run time (the range is also the kernel's
// ephemeral one); its servers' 18400-18499.
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
    const port = String(freePorts(38000, 38009, 1));
    const server = spawnProc(["iperf3", "-s", "-1", "-p", port], 60_000);
    await waitBound(Number(port));
    const r = await run(["iperf3", "-c", "127.0.0.1", "-p", port, "-t", "1", "-J"]);
    server.kill();
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as { end: { sum_received: { bytes: number } } };
    expect(doc.end.sum_received.bytes).toBeGreaterThan(0);
  }, 90_000);

  test.skipIf(!hasTool(["iperf3", "--version"], /iperf 3/))("stock iperf3 -c against the arm64 iperf3 -s: TCP, UDP, UDP -R", () =>
    stockIperf3Runs((args) => spawnProc(arm64Command(bin, args), 120_000), freePorts(18400, 18450, 1), [["-t", "2"], ["-u", "-b", "100M", "-t", "2"], ["-u", "-b", "100M", "-t", "2", "-R"]]), 150_000);

  test.skipIf(!hasTool(["iperf", "-v"], /iperf version 2/))("stock iperf -c against the arm64 iperf -s: both count the same bytes", () => stockIperfRun((args) => spawnProc(arm64Command(bin, args), 120_000), freePorts(18450, 18500, 1)), 90_000);

  test.skipIf(!hasTool(["iperf", "-v"], /iperf version 2/))("iperf -c against stock iperf -s", async () => {
    const port = String(freePorts(38000, 38009, 1));
    const server = spawnProc(["iperf", "-s", "-p", port], 60_000);
    await waitBound(Number(port));
    const r = await run(["iperf", "-c", "127.0.0.1", "-p", port, "-t", "1", "-y", "C"]);
    server.kill();
    expect(r.code).toBe(0);
    const bytes = Number(r.stdout.trim().split("\n").at(-1)?.split(",")[7]);
    expect(bytes).toBeGreaterThan(0);
  }, 90_000);

  test.skipIf(!hasTool(["netperf", "-V"], /2\.7/))("netperf TCP_RR against stock netserver", async () => {
    const port = String(freePorts(38000, 38009, 1));
    const server = spawnProc(["netserver", "-D", "-p", port], 60_000);
    await waitBound(Number(port));
    const r = await run(["netperf", "-H", "127.0.0.1", "-p", port, "-l", "1", "-t", "TCP_RR", "-P", "0", "--", "-r", "1,1"]);
    server.kill();
    expect(r.code).toBe(0);
    const rate = Number(r.stdout.trim().split(/\s+/).at(-1));
    expect(rate).toBeGreaterThan(0);
  }, 90_000);

  test("ntttcp: the arm64 receiver takes the x64 build's sync-mode sender, bytes agree", async () => {
    // The data port and its sync port (base − 1).
    const base = freePorts(38010, 38100, 2) + 1;
    const receiver = spawnProc(arm64Command(bin, ["ntttcp", "-r127.0.0.1", "-p", String(base), "-P", "1", "-t", "2"]), 60_000);
    // The sync port is bound last.
    await waitBound(base - 1, "tcp", 30_000);
    const sender = await spawnProc([new URL("../../dist/anyperf", import.meta.url).pathname, "ntttcp", "-s127.0.0.1", "-p", String(base), "-P", "1", "-t", "2"], 60_000).done;
    const rx = await receiver.done;
    expect(sender.code).toBe(0);
    expect(rx.code).toBe(0);
    expect(linuxTotalBytes(rx.stdout)).toBeGreaterThan(0);
  }, 90_000);
});
