/**
 * A stock `iperf -c -u -e --trip-times` against our `iperf -s -u` (no -e): a stock server reports that flow with its
 * latency (avg/min/max/stdev from the datagrams' send stamps) in its own lines and in the report it sends back. Ours
 * printed the plain jitter/loss line and sent a report without latency ("-/-/-/- ms 0 pps" on the client).
 */
import { expect, test } from "bun:test";
import { hasStockIperf, oursMain, stock, waitListening } from "./iperf2-harness.ts";
import { freePorts } from "../support/processes.ts";

const PORT = freePorts(27991, 27999, 1);
const LATENCY = /\d+\.\d{3}\/\d+\.\d{3}\/\d+\.\d{3}\/\d+\.\d{3} ms \d+ pps/;

test.skipIf(!hasStockIperf())("-u -e --trip-times: our server's line and its report to the stock client carry the latency", async () => {
  const srv = oursMain(["-s", "-u", "-p", String(PORT)]);
  try {
    await waitListening(PORT, "udp", 30_000);
    const c = await stock(["-c", "127.0.0.1", "-u", "-p", String(PORT), "-e", "--trip-times", "-t", "1"]).done;
    expect(c.code).toBe(0);
    const report = c.out.split("\n").slice(c.out.split("\n").findIndex((l) => l.endsWith("Server Report:"))).join("\n");
    expect(report, c.out).toMatch(LATENCY);
    await Bun.sleep(300);
    const out = srv.text();
    expect(out).toContain("(trip-times)");
    expect(out.split("\n").find((l) => /^\[ +1\] 0\.0+-\d\.\d+ sec/.test(l)), out).toMatch(LATENCY);
  } finally {
    srv.kill();
    await srv.done;
  }
}, 60_000);
