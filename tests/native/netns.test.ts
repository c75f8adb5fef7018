/**
 * The native mode between two hosts for real: namespaces a (10.231.0.1) and b (10.231.0.2) joined by a veth pair
 * shaped by tc tbf to 1 Gbit/s (tests/support/netns.ts). The native server runs in b (tests/native/native-server.ts
 * until `anyperf serve` lands; tests/netns/two-hosts.test.ts does the same through serve), stock iperf3 -s beside it;
 * from a, `anyperf client` and stock `iperf3 -c` agree within 2 %, both ends' bytes reconcile, the diagnosis names
 * the link; -R and UDP cross the veth the other way (the server connects to the client's address).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { makePair, netnsSkipReason, type NetnsPair } from "../support/netns.ts";
import { Results } from "../../src/report/result.ts";
import type { Finished } from "../support/processes.ts";

const MAIN = join(import.meta.dir, "..", "..", "main.ts");
const SERVER = join(import.meta.dir, "native-server.ts");
const BUN = process.execPath;
const RATE = 1e9;
const T = 120_000;
/** Alternating runs of each client; their medians are compared. */
const RUNS = 5;
const SKIP = netnsSkipReason();
const HAVE_IPERF3 = Bun.spawnSync(["iperf3", "--version"], { stdout: "pipe", stderr: "pipe" }).success;

function results(f: Finished): Results {
  if (f.code !== 0) throw new Error(`client exited ${f.code}: ${f.stderr}`);
  return Results.parse(JSON.parse(f.stdout));
}

describe.skipIf(SKIP !== undefined || !HAVE_IPERF3)("anyperf client → native server across a tbf 1 Gbit/s veth", () => {
  let pair: NetnsPair;
  const nativePort = 31100;
  const iperf3Port = 31101;
  const client = (args: string[]) => pair.run(pair.a, [BUN, MAIN, "client", pair.b.addr, "-p", String(nativePort), ...args, "--json"], 60_000).done.then(results);

  beforeAll(async () => {
    pair = makePair({ tag: "native", rate: "1gbit" });
    pair.run(pair.b, [BUN, SERVER, String(nativePort), "--host", "0.0.0.0"], 600_000);
    pair.run(pair.b, ["iperf3", "-s", "-p", String(iperf3Port)], 600_000);
    await pair.waitListening(pair.b, nativePort);
    await pair.waitListening(pair.b, iperf3Port);
  }, T);
  afterAll(() => pair?.teardown());

  test("TCP: within 2 % of stock iperf3, bytes reconcile, the diagnosis is the link", async () => {
    // Runs alternate, and medians of five are compared: the machine is shared, one pair of runs can differ by 4 %.
    const ours: Results[] = [];
    const theirs: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      ours.push(await client(["-t", "3", "--link-speed", "1G"]));
      const stock = await pair.run(pair.a, ["iperf3", "-c", pair.b.addr, "-p", String(iperf3Port), "-t", "3", "-J"], 60_000).done;
      expect(stock.code).toBe(0);
      theirs.push(JSON.parse(stock.stdout).end.sum_received.bits_per_second as number);
    }
    const median = (v: number[]) => [...v].sort((a, b) => a - b)[RUNS >> 1]!;
    const a = median(ours.map((r) => r.summary.throughput_bps));
    const b = median(theirs);
    expect(a).toBeGreaterThan(0.85 * RATE);
    expect(Math.abs(a - b) / b).toBeLessThan(0.02);
    for (const r of ours) {
      expect(r.remote!.totals.received_bytes).toBe(r.totals.sent_bytes!);
      expect(r.remote!.cpu.host?.perCpu?.length).toBeGreaterThan(0);
      expect(r.diagnosis?.link_bps).toBe(RATE);
    }
    // Most runs name the link; a run a busy machine slowed is diagnosed as such, and the failure quotes every verdict.
    const verdicts = ours.map((r) => `${r.diagnosis?.verdict}: ${r.diagnosis?.evidence.join(" | ")}`);
    expect(verdicts.filter((v) => v.startsWith("link: ")).length > RUNS / 2 ? "link" : verdicts.join(" / ")).toBe("link");
  }, T);

  test("-R: the server in b connects back to the client in a and sends through the shaper", async () => {
    const r = await client(["-t", "3", "-R"]);
    expect(r.summary.throughput_bps).toBeGreaterThan(0.85 * RATE);
    expect(r.summary.throughput_bps).toBeLessThan(RATE);
    expect(r.totals.received_bytes).toBe(r.remote!.totals.sent_bytes!);
  }, T);

  test("UDP at 200 Mbit/s: every datagram sent is received or counted lost", async () => {
    const r = await client(["-t", "3", "-u", "-b", "200M"]);
    const sent = r.totals.sent_packets!;
    const figures = `sent ${sent}, received ${r.remote!.totals.received_packets}, lost ${r.summary.lost}, ${r.summary.throughput_bps} bit/s`;
    // A failure names every figure: which of them a loaded machine moved.
    expect(r.remote!.totals.received_packets! + (r.summary.lost ?? 0) <= sent && r.summary.throughput_bps > 0.1 * RATE ? "ok" : figures).toBe("ok");
  }, T);
});
