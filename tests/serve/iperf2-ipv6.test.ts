import { afterAll, beforeAll, expect, test } from "bun:test";
import { hasTool, spawnProc, type Proc } from "../support/processes.ts";
import { serveReady, spawnServe } from "./harness.ts";
import { iperf2Peers, type StockPeer } from "../support/stock-peers.ts";

/**
 * `anyperf serve` with no -B listens for iperf 2 on both families, as it does for iperf3: a stock `iperf -c ::1 -V`
 * (TCP and UDP) is served beside an IPv4 client, on iperf's own port and on the port it shares with ntttcp; both stock
 * clients (2.1.8 and 2.2.1).
 * Before, serve bound 0.0.0.0 and refused the -V client.
 */

const OWN = 30880;
// ntttcp beside it takes SHARED-1 (sync), SHARED..SHARED+15 (data) and SHARED+100.. (Windows tokens).
const SHARED = 30620;
const hasIperf = hasTool(["iperf", "-v"], /iperf version 2\./);

let serve: Proc;
beforeAll(async () => {
  if (!hasIperf) return;
  serve = spawnServe(["-p", "30882", "--iperf3", "off", "--netserver", "off", "--iperf", String(OWN), "--ntttcp", "off"], 120_000);
  await serveReady(serve, 2, 60_000);
});
afterAll(() => serve?.kill());

async function stock(peer: StockPeer, args: string[]): Promise<string> {
  const p = spawnProc([peer.command, ...args], 20_000);
  const { code } = await p.done;
  expect(code, p.stdout() + p.stderr()).toBe(0);
  return p.stdout() + p.stderr();
}

for (const peer of iperf2Peers()) {
  test.skipIf(!hasIperf || peer.version === undefined)(`${peer.label} -V over ::1 and an IPv4 client, TCP and UDP, against serve`, async () => {
    for (const host of ["::1", "127.0.0.1"]) {
      const v6 = host.includes(":") ? ["-V"] : [];
      expect(await stock(peer, ["-c", host, ...v6, "-p", String(OWN), "-t", "1"])).toMatch(/0\.0+-\d\.\d+ sec .*bits\/sec/);
      expect(await stock(peer, ["-c", host, ...v6, "-p", String(OWN), "-u", "-t", "1"])).toContain("Server Report:");
    }
  }, 60_000);
}

test.skipIf(!hasIperf)("the port iperf 2 shares with ntttcp takes an IPv6 iperf client too", async () => {
  const shared = spawnServe(["-p", "30883", "--iperf3", "off", "--netserver", "off", "--iperf", String(SHARED), "--ntttcp", String(SHARED)], 120_000);
  try {
    await serveReady(shared, 3, 60_000);
    for (const peer of iperf2Peers().filter((p) => p.version !== undefined)) {
      expect(await stock(peer, ["-c", "::1", "-V", "-p", String(SHARED), "-t", "1"])).toMatch(/0\.0+-\d\.\d+ sec .*bits\/sec/);
    }
  } finally {
    shared.kill();
  }
}, 90_000);
