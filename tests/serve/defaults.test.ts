import { describe, expect, test } from "bun:test";
import { assertFree } from "../support/processes.ts";
import { anyperf, serveReady } from "./harness.ts";
import { spawnProc } from "../support/processes.ts";

/**
 * `anyperf serve` with no options, as on a fresh host: the stock default ports. It uses ports other tests keep away
 * from, so it sits in a file of its own (./scripts/test runs one file at a time) and is skipped, saying which port,
 * when something on this machine already holds one.
 */

const PORTS = [5300, 5201, 5001, 12865, 5000, ...Array.from({ length: 15 }, (_, i) => 5002 + i), ...Array.from({ length: 16 }, (_, i) => 6001 + i)];
const busy = PORTS.filter((p) => {
  try {
    assertFree(p);
    return false;
  } catch {
    return true;
  }
});
if (busy.length > 0) console.warn(`skipped: anyperf serve with no options needs the stock default ports; in use here: ${busy.join(", ")}`);

describe.skipIf(busy.length > 0)("anyperf serve with no options", () => {
  test("one line per listener on each peer's default port, stock clients reach it there, Ctrl+C ends it", async () => {
    const serve = spawnProc([...anyperf(), "serve"], 60_000);
    try {
      await serveReady(serve, 5);
      const lines = serve.stdout().split("\n").filter((l) => / on :\d+/.test(l));
      expect(lines.map((l) => l.split(" (")[0])).toEqual(["anyperf on :5300", "iperf3 on :5201", "iperf on :5001", "netserver on :12865", "ntttcp on :5001"]);
      expect(lines[4]).toContain("Linux sync 5000");
      expect(lines[4]).toContain("Windows sync 6001-6016");
      const iperf3 = await spawnProc(["iperf3", "-c", "127.0.0.1", "-t", "1"], 20_000).done;
      expect(iperf3.code).toBe(0);
      const iperf = await spawnProc(["iperf", "-c", "127.0.0.1", "-t", "1"], 20_000).done;
      expect(iperf.code).toBe(0);
      const netperf = await spawnProc(["netperf", "-H", "127.0.0.1", "-l", "1"], 20_000).done;
      expect(netperf.code).toBe(0);
      const client = await spawnProc([...anyperf(), "client", "127.0.0.1", "-t", "1"], 20_000).done;
      expect(client.code).toBe(0);
    } finally {
      serve.kill("SIGINT");
    }
    expect((await serve.done).code).toBe(130);
  }, 90_000);
});
