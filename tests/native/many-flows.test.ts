import { describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { client, nativeServers } from "./harness.ts";
import { freePorts, sleep } from "../support/processes.ts";
import { Results } from "../../src/report/result.ts";

/**
 * Many flows between two processes (issue 20's 10,000-flow scale, at a size a test can afford): each end holds one
 * descriptor per flow, and each reports its memory per flow and how evenly the flows were served.
 */

const start = nativeServers();
const FLOWS = 300;

const openFds = (pid: number) => readdirSync(`/proc/${pid}/fd`).length;

async function manyFlows(args: string[]) {
  const port = freePorts(19000, 19499, 1);
  const server = await start(port);
  const idle = openFds(server.pid);
  const c = client(["-p", String(port), "-t", "3", "-P", String(FLOWS), ...args, "--json"], 90_000);
  // Mid-run, after set-up: every flow connected, none of its listeners left.
  let busiest = idle;
  for (let i = 0; i < 30 && busiest < idle + FLOWS; i++) {
    await sleep(200);
    busiest = Math.max(busiest, openFds(server.pid));
  }
  await sleep(500);
  const during = openFds(server.pid);
  const clientFds = openFds(c.pid);
  const done = await c.done;
  if (done.code !== 0) throw new Error(`client exited ${done.code}: ${done.stderr}`);
  return { r: Results.parse(JSON.parse(done.stdout)), idle, during, clientFds };
}

describe("many flows, client and server processes", () => {
  test("TCP_RR: one descriptor per flow on each end; both ends report memory per flow; no flow starved", async () => {
    const { r, idle, during, clientFds } = await manyFlows(["--rr", "1,1"]);
    // A listener per flow on top would be 2 × FLOWS on the server.
    expect(during - idle).toBeGreaterThanOrEqual(FLOWS);
    expect(during - idle).toBeLessThan(FLOWS + 50);
    expect(clientFds).toBeLessThan(FLOWS + 150);
    for (const f of [r.flows!, r.remote!.flows!]) {
      expect(f.count).toBe(FLOWS);
      // --json prints bytes as whole numbers.
      expect(f.memory_per_flow_bytes).toBe(Math.round((f.rss_with_flows_bytes - f.rss_before_bytes) / FLOWS));
    }
    const rates = r.streams.filter((s) => s.side === "client").map((s) => s.transactions_per_second!);
    expect(rates).toHaveLength(FLOWS);
    // The rates are printed as whole bits/s; the ratio is computed from the exact ones.
    expect(r.flows!.slowest_to_fastest).toBeCloseTo(Math.min(...rates) / Math.max(...rates), 6);
    expect(r.flows!.slowest_to_fastest).toBeGreaterThan(0);
  });

  test("bulk: the receivers that count the flows are the server's; one descriptor per flow there too", async () => {
    const { r, idle, during } = await manyFlows(["-l", "16K"]);
    expect(during - idle).toBeGreaterThanOrEqual(FLOWS);
    expect(during - idle).toBeLessThan(FLOWS + 50);
    const rates = r.remote!.streams.filter((s) => s.side === "recv").map((s) => s.throughput_bps);
    expect(rates).toHaveLength(FLOWS);
    // The rates are printed as whole bits/s; the ratio is computed from the exact ones.
    expect(r.flows!.slowest_to_fastest).toBeCloseTo(Math.min(...rates) / Math.max(...rates), 6);
    expect(r.remote!.flows!.count).toBe(FLOWS);
  });
});
