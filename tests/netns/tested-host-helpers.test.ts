/**
 * The cloud guide's topology, scaled down: one tested host and four helpers, each a network namespace on one bridge
 * (tests/support/netns.ts makeBridge), every helper running `anyperf serve`. The tested host runs one `anyperf client`
 * across all four: the whole run equals the sum of its servers within 0.5 %, and each server's remote bytes are the
 * ones its own log names. Ports 32000-32999.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { Results } from "../../src/report/result.ts";
import { listNamespaces, makeBridge, netnsSkipReason, type NetnsBridge } from "../support/netns.ts";
import { jsonDoc, type Proc } from "../support/processes.ts";

const MAIN = join(import.meta.dir, "..", "..", "main.ts");
const BUN = process.execPath;
const PORT = 32530;
const SKIP = netnsSkipReason();
if (SKIP) console.warn(`tests/netns skipped: ${SKIP}`);

const within = (a: number, b: number, pct: number) => expect(Math.abs(a - b)).toBeLessThanOrEqual((Math.abs(b) * pct) / 100);

/** The whole run's bytes and rate are its servers' summed, within 0.5 %. */
function wholeIsSum(r: Results): void {
  within(r.summary.bytes, r.hosts!.reduce((a, h) => a + h.summary!.bytes, 0), 0.5);
  within(r.summary.throughput_bps, r.hosts!.reduce((a, h) => a + h.summary!.throughput_bps, 0), 0.5);
}

/** What a server's log says its one test moved. */
function logged(p: Proc): { received: number; sent: number } {
  const m = /done: (\d+) bytes received, (\d+) sent/.exec(p.stdout());
  if (!m) throw new Error(`no 'done' line in the server's log:\n${p.stdout()}${p.stderr()}`);
  return { received: Number(m[1]), sent: Number(m[2]) };
}

describe.skipIf(SKIP !== undefined)("one tested host, four helpers on a bridge", () => {
  let net: NetnsBridge;
  beforeAll(() => {
    net = makeBridge({ tag: "mh", helpers: 4 });
  });
  afterAll(() => {
    net?.teardown();
    expect(listNamespaces().filter((n) => n.includes(`${process.pid}-mh-`))).toEqual([]);
  });

  /** A fresh serve on every helper (each log then holds one test), the client's document, the serves' logs. */
  async function across(args: string[]): Promise<{ r: Results; serves: Proc[] }> {
    const serves = net.helpers.map((h) => net.run(h, [BUN, MAIN, "serve", "-p", String(PORT), "--iperf3", "off", "--iperf", "off", "--netserver", "off", "--ntttcp", "off"], 60_000));
    await Promise.all(net.helpers.map((h, i) => net.waitListening(h, PORT, serves[i])));
    const f = await net.run(net.tested, [BUN, MAIN, "client", ...net.helpers.map((h) => `${h.addr}:${PORT}`), "-t", "2", "--json", ...args], 60_000).done;
    expect(f.code).toBe(0);
    const r = jsonDoc(Results, f);
    for (const s of serves) s.kill();
    await Promise.all(serves.map((s) => s.done));
    return { r, serves };
  }

  test("the tested host sends to all four (-P 2 each): the whole run is the sum of its servers; each server's bytes are its log's", async () => {
    const { r, serves } = await across(["-P", "2"]);
    expect(r.hosts!.map((h) => h.host)).toEqual(net.helpers.map((h) => h.addr));
    for (const [i, h] of r.hosts!.entries()) {
      expect(h.summary!.bytes).toBeGreaterThan(1e6);
      expect(h.remote!.totals.received_bytes).toBe(logged(serves[i]!).received);
    }
    wholeIsSum(r);
    expect(r.totals.sent_bytes).toBe(r.hosts!.reduce((a, h) => a + h.remote!.totals.received_bytes!, 0));
  }, 120_000);

  test("-R: all four send to the tested host; its window's bytes are the sum of its servers'; each server's are its log's", async () => {
    const { r, serves } = await across(["-R"]);
    for (const [i, h] of r.hosts!.entries()) {
      expect(h.summary!.bytes).toBeGreaterThan(1e6);
      expect(h.remote!.totals.sent_bytes).toBe(logged(serves[i]!).sent);
    }
    wholeIsSum(r);
    expect(r.totals.received_bytes).toBe(r.hosts!.reduce((a, h) => a + h.remote!.totals.sent_bytes!, 0));
  }, 120_000);

  test("--rr 1,1 -P 4 across all four (16 flows): the whole run's transactions are the sum of its servers'; each server answered what its log says", async () => {
    const { r, serves } = await across(["--rr", "1,1", "-P", "4"]);
    for (const [i, h] of r.hosts!.entries()) {
      expect(h.summary!.transactions).toBeGreaterThan(100);
      expect(h.remote!.totals.transactions).toBe(Number(/done: (\d+) transactions answered/.exec(serves[i]!.stdout())?.[1]));
    }
    expect(r.summary.transactions).toBe(r.hosts!.reduce((a, h) => a + h.summary!.transactions!, 0));
    within(r.summary.transactions_per_second!, r.hosts!.reduce((a, h) => a + h.summary!.transactions_per_second!, 0), 0.5);
  }, 120_000);
});
