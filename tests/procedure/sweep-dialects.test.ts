/**
 * `anyperf sweep ... -- CLIENT ARGS`: our dialect client once per point against a stock server, the table at the
 * end, each run in the history. Skipped where the stock server is absent. Ports 40020-40029.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { assertFree, freePorts, hasTool, spawnProc, waitBound, type Proc } from "../support/processes.ts";
import { HistoryEntry } from "../../src/procedure/history.ts";

const MAIN = join(import.meta.dir, "..", "..", "main.ts");
const anyperf = (args: string[]) => spawnProc([process.execPath, MAIN, ...args], 90_000);
const servers: Proc[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.kill();
    await s.done;
  }
});
async function server(cmd: string[], port: number): Promise<void> {
  assertFree(port);
  servers.push(spawnProc(cmd, 60_000));
  await waitBound(port);
}
const history = (f: string) => readFileSync(f, "utf8").trim().split("\n").map((l) => HistoryEntry.parse(JSON.parse(l)));
const rowsOf = (stdout: string) => stdout.split("\n").filter((l) => /^[* ]\s+streams=\d/.test(l));

describe("anyperf sweep around a dialect client", () => {
  test.skipIf(!hasTool(["iperf3", "--version"], /iperf 3/))("streams=1,2 -- iperf3 -c against stock iperf3 -s: two rows, one best, -P per point", async () => {
    const port = String(freePorts(40020, 40025, 1));
    await server(["iperf3", "-s", "-p", port], Number(port));
    const hist = join(mkdtempSync(join(tmpdir(), "anyperf-sweep-")), "h.jsonl");
    const r = await anyperf(["sweep", "streams=1,2", "--history", hist, "--", "iperf3", "-c", "127.0.0.1", "-p", port, "-t", "1"]).done;
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("iperf Done.");
    const rows = rowsOf(r.stdout);
    expect(rows).toHaveLength(2);
    expect(rows.filter((l) => l.startsWith("*"))).toHaveLength(1);
    const h = history(hist);
    expect(h.map((e) => [e.mode, e.peer, e.point.streams, e.argv.slice(0, 3)])).toEqual([
      ["iperf3", "127.0.0.1", "1", ["iperf3", "-P", "1"]],
      ["iperf3", "127.0.0.1", "2", ["iperf3", "-P", "2"]],
    ]);
    for (const e of h) expect(e.results.throughput_bps).toBeGreaterThan(0);
  }, 60_000);

  test.skipIf(!hasTool(["netperf", "-V"], /Netperf version 2\.7/))("streams=1,2 -- netperf -t TCP_RR against stock netserver: instances per point, their rates summed", async () => {
    const port = String(freePorts(40025, 40030, 1));
    await server(["netserver", "-D", "-p", port], Number(port));
    const hist = join(mkdtempSync(join(tmpdir(), "anyperf-sweep-")), "h.jsonl");
    const r = await anyperf(["sweep", "streams=1,2", "--history", hist, "--", "netperf", "-H", "127.0.0.1", "-p", port, "-t", "TCP_RR", "-l", "1"]).done;
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("sweep: medians per point; * best transactions/s");
    const rows = rowsOf(r.stdout);
    expect(rows).toHaveLength(2);
    const h = history(hist);
    expect(h.map((e) => e.point.streams)).toEqual(["1", "2"]);
    expect(h.every((e) => e.test === "rr" && e.results.transactions_per_second! > 0)).toBe(true);
    // The table's figure for a point is the history's: one run each, so the median is that run.
    const tps = (row: string) => Number(/streams=\d\s+1\s+\S+ [kMG]?bit\/s\s+([\d,]+)/.exec(row)![1]!.replaceAll(",", ""));
    expect(tps(rows[0]!)).toBe(Math.round(h[0]!.results.transactions_per_second!));
    expect(tps(rows[1]!)).toBe(Math.round(h[1]!.results.transactions_per_second!));
    // Two instances' latency is their transactions pooled, not n/a: within the two runs' own percentiles.
    const p50 = h[1]!.results.latency_p50_us!;
    expect(p50).toBeGreaterThan(0);
    expect(rows[1]).not.toMatch(/n\/a/);
    // And close to what the dialect's combined line printed (it counts from each stream's open, the table the measured window).
    const printed = Number(/Latency of 2 instances of TCP_RR \(usec\): .* p50 (\d+)/.exec(r.stdout)![1]);
    expect(Math.abs(p50 - printed)).toBeLessThanOrEqual(Math.max(3, printed * 0.5));
  }, 60_000);

  test("mistakes: no client, a key the client lacks, client options before --", async () => {
    for (const [argv, pattern] of [
      [["sweep", "streams=1,2"], /sweep needs a client after --/],
      [["sweep", "rate=1M,2M", "--", "netperf", "-H", "127.0.0.1"], /sweep rate: netperf has no option for it; sweep streams/],
      [["sweep", "streams=1", "-t", "2", "--", "iperf3", "-c", "127.0.0.1"], /'-t 2' is not KEY=V1,V2/],
    ] as const) {
      const r = await anyperf([...argv]).done;
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(pattern);
    }
  });
});
