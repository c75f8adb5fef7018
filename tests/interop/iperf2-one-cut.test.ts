/**
 * One measurement path (issue 16 item 5) on the iperf 2 dialect: `anyperf iperf -s -i 0.5 -y C --http` cuts each
 * interval once, for its CSV line and for /status, so /status's intervals carry exactly the bytes the server printed
 * for them. Before, the status endpoint's own timer cut at other instants.
 */
import { expect, test } from "bun:test";
import { StatusDocument } from "../../src/status/schema.ts";
import { csv, hasStockIperf, oursMain, sleep, stock, waitListening } from "./iperf2-harness.ts";
import { freePorts } from "../support/processes.ts";

// Free ports picked at run time: the range is also the kernel's ephemeral one.
const PORT = freePorts(37070, 37100, 2);
const HTTP = PORT + 1;

test.skipIf(!hasStockIperf())("iperf -s -i 0.5 -y C: /status's intervals are the server's printed intervals", async () => {
  const srv = oursMain(["-s", "-p", String(PORT), "-i", "0.5", "-y", "C", "--http", `127.0.0.1:${HTTP}`]);
  try {
    // A loaded host (8 helpers on 2 cores) has taken over 8 s to start the server from source.
    await waitListening(PORT, "tcp", 30_000);
    await waitListening(HTTP, "tcp", 30_000);
    const client = await stock(["-c", "127.0.0.1", "-p", String(PORT), "-t", "3", "-i", "0.5"]).done;
    expect(client.code).toBe(0);
    await sleep(400);
    const doc = StatusDocument.parse(await (await fetch(`http://127.0.0.1:${HTTP}/status`)).json());
    const view = doc.test!;
    // Interval lines: the nominal 0.5 s slices; the final line spans the whole test.
    const printed = csv(srv.text()).filter((l) => Math.abs(l.end - l.start - 0.5) < 1e-6);
    expect(printed.length).toBeGreaterThanOrEqual(5);
    const live = view.intervals.map((i) => Math.round((i.bitsPerSecond * (i.end - i.start)) / 8));
    expect(live).toEqual(printed.map((l) => l.bytes));
  } finally {
    srv.kill();
    await srv.done;
  }
}, 40_000);
