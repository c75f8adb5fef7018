import { describe, expect, test } from "bun:test";
import { Results } from "../../src/report/result.ts";
import { freePorts, hasTool, spawnProc, waitBound, waitFor } from "../support/processes.ts";
import { disagreement } from "../interop/iperf3-harness.ts";
import { stockIperf3Runs, stockIperfRun } from "./stock-clients.ts";
import { linuxTotalBytes } from "../interop/ntttcp-harness.ts";
import { buildTarget, muslCannotRun, muslMissing } from "./targets.ts";

/**
 * The linux-x64-musl build, run through the musl loader (its ELF interpreter): the loopback self-test and one stock
 * pairing per dialect. Built before the tests are collected, so a build that cannot start is a skip with its reason
 * (on Debian: no musl-built libstdc++). Ports picked free at run time in 18010-18099.
 */
const bin = muslMissing ? "" : buildTarget("linux-x64-musl");
const why = muslMissing ?? muslCannotRun(bin);
let next = 18010;
function ports(n: number): number {
  const p = freePorts(next, 18100, n);
  next = p + n;
  return p;
}
const ours = (args: string[], limitMs = 60_000) => spawnProc([bin, ...args], limitMs);

describe.skipIf(why !== undefined)(`linux-x64-musl binary${why ? ` (skipped: ${why})` : ""}`, () => {
  test("it runs on musl: no glibc in its maps", async () => {
    const p = ours(["iperf3", "-s", "-1", "-p", String(ports(1))]);
    try {
      await waitFor(p.stdout, /Server listening/, 30_000);
      const maps = await Bun.file(`/proc/${p.pid}/maps`).text();
      expect(maps).toContain("ld-musl");
      expect(maps).not.toMatch(/libc\.so\.6|ld-linux-x86-64/);
    } finally {
      p.kill();
    }
  }, 60_000);

  test("loopback self-test: one results document with bytes and host CPU", async () => {
    const r = await ours(["loopback", "-t", "1", "-P", "2", "--json"]).done;
    expect(r.code).toBe(0);
    const doc = Results.parse(JSON.parse(r.stdout));
    expect(doc.summary.bytes).toBeGreaterThan(0);
    expect(doc.cpu.busy_percent).toBeGreaterThan(0);
  }, 60_000);

  test.skipIf(!hasTool(["iperf3", "--version"], /iperf 3/))("stock iperf3 -c against the musl iperf3 -s: TCP, UDP, UDP -R", () =>
    stockIperf3Runs((args) => ours(args, 90_000), ports(1), [["-t", "2"], ["-u", "-b", "100M", "-t", "2"], ["-u", "-b", "100M", "-t", "2", "-R"]]), 120_000);

  test.skipIf(!hasTool(["iperf", "-v"], /iperf version 2/))("stock iperf -c against the musl iperf -s: both count the same bytes", () => stockIperfRun((args) => ours(args, 90_000), ports(1)), 90_000);

  test.skipIf(!hasTool(["netperf", "-V"], /2\.7/))("musl netperf TCP_RR against stock netserver", async () => {
    const p = ports(1);
    const server = spawnProc(["netserver", "-D", "-p", String(p)], 60_000);
    try {
      await waitBound(p);
      const r = await ours(["netperf", "-H", "127.0.0.1", "-p", String(p), "-l", "1", "-t", "TCP_RR", "-P", "0", "--", "-r", "1,1"]).done;
      expect(r.code).toBe(0);
      expect(Number(r.stdout.trim().split(/\s+/).at(-1))).toBeGreaterThan(0);
    } finally {
      server.kill();
    }
  }, 90_000);

  test("ntttcp: the musl receiver takes the host build's sync-mode sender, bytes agree", async () => {
    const base = ports(2) + 1;
    const receiver = ours(["ntttcp", "-r127.0.0.1", "-p", String(base), "-P", "1", "-t", "2"]);
    // The sync port (base − 1) is bound last.
    await waitBound(base - 1, "tcp", 30_000);
    const sender = await spawnProc([process.execPath, new URL("../interop/ntttcp-cli.ts", import.meta.url).pathname, "-s127.0.0.1", "-p", String(base), "-P", "1", "-t", "2"], 60_000).done;
    const rx = await receiver.done;
    expect(sender.code).toBe(0);
    expect(rx.code).toBe(0);
    expect(linuxTotalBytes(rx.stdout)).toBeGreaterThan(0);
    expect(disagreement(linuxTotalBytes(rx.stdout), linuxTotalBytes(sender.stdout))).toBeLessThanOrEqual(0.01);
  }, 90_000);
});
