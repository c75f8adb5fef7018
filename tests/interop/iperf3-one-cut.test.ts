/**
 * One measurement path (issue 16 item 5): `anyperf iperf3 -s -i 0.5 --http` cuts each interval once, on iperf3's
 * clock, for its own report and for /status alike, so the live endpoint shows the intervals the server prints, and
 * /results the bytes it reports. Before, a second timer in the engine cut /status's intervals at other instants.
 */
import { expect, test } from "bun:test";
import { StatusDocument } from "../../src/status/schema.ts";
import { assertFree, hasStockIperf3, oursMain, sleep, stock, waitListening } from "./iperf3-harness.ts";
import { freePorts } from "../support/processes.ts";

// Free ports picked at run time: the range is also the kernel's ephemeral one.
const PORT = freePorts(37040, 37070, 2);
const HTTP = PORT + 1;
const base = `http://127.0.0.1:${HTTP}`;

interface Iperf3Doc {
  intervals: Array<{ sum: { bytes: number; seconds: number; bits_per_second: number } }>;
  end: { sum_received: { bytes: number } };
}

test.skipIf(!hasStockIperf3())("iperf3 -s -i 0.5: /status's intervals and /results are the server's own figures", async () => {
  assertFree(PORT);
  assertFree(HTTP);
  const server = oursMain(["-s", "-p", String(PORT), "-J", "-i", "0.5", "--http", `127.0.0.1:${HTTP}`], 60_000);
  try {
    // A loaded host (8 helpers on 2 cores) has taken over 8 s to start the server from source.
    await waitListening(PORT, 30_000).catch((e: Error) => {
      throw new Error(`${e.message}; the server wrote: ${server.stdout()}${server.stderr()}`);
    });
    const client = await stock(["-c", "127.0.0.1", "-p", String(PORT), "-t", "3", "-i", "0.5"]).done;
    expect(client.code, client.stderr).toBe(0);
    const end = Date.now() + 5000;
    while (!/^\}$/m.test(server.stdout()) && Date.now() < end) await sleep(50);
    const own = JSON.parse(server.stdout().slice(0, server.stdout().search(/^\}$/m) + 1)) as Iperf3Doc;
    const doc = StatusDocument.parse(await (await fetch(`${base}/status`)).json());
    const view = doc.test!;
    expect(view.phase).toBe("done");

    // The same intervals: as many, and each at the rate the server printed for it. iperf3 leaves out a trailing
    // sliver (under 10 % of -i) that moved nothing; /status keeps it, with its 0 bytes.
    const printed = own.intervals.map((i) => i.sum);
    expect(printed.length).toBeGreaterThanOrEqual(6);
    const shown = view.intervals.filter((iv, k) => k < printed.length || iv.bitsPerSecond > 0 || iv.end - iv.start >= 0.05);
    expect(shown.length).toBe(printed.length);
    shown.forEach((iv, k) => {
      expect(Math.abs(iv.end - iv.start - printed[k]!.seconds)).toBeLessThan(0.002);
      expect(Math.abs(iv.bitsPerSecond / printed[k]!.bits_per_second - 1)).toBeLessThan(0.005);
    });
    // Cumulative bytes on /status are the sum of the printed intervals' bytes.
    expect(view.bytes).toBe(printed.reduce((n, i) => n + i.bytes, 0));
    const results = (await (await fetch(`${base}/results/${view.id}`)).json()) as { summary: { bytes: number } };
    expect(results.summary.bytes).toBe(own.end.sum_received.bytes);
  } finally {
    server.kill();
    await server.done;
  }
}, 60_000);
