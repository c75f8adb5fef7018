/**
 * `anyperf iperf -s` sending (-R) to a stock client that is killed mid-test, as the stock 2.1.8 server behaves: on
 * stderr "tcp write failed: Connection reset by peer" (or "Broken pipe") and "shutdown failed: Transport endpoint
 * is not connected", then the final line of what went out, and the server goes on. Before, ours said nothing of
 * the drop.
 */
import { expect, test } from "bun:test";
import { iperf2Peers } from "../support/stock-peers.ts";
import { freePorts } from "../support/processes.ts";
import { oursMain, stockPeer, waitFor } from "./iperf2-harness.ts";

const peer = iperf2Peers()[0]!;

test.skipIf(peer.version === undefined)(`stock ${peer.label} client -R killed: our server says its write and shutdown failed, then its final line`, async () => {
  const port = freePorts(28200, 28220, 1);
  const server = oursMain(["-s", "-p", String(port)]);
  try {
    await waitFor(server, /Server listening/, 30_000);
    const client = stockPeer(peer)(["-c", "127.0.0.1", "-p", String(port), "-R", "-t", "10", "-i", "1"]);
    await waitFor(client, /\] 0\.0+-1\.0+ sec/, 30_000);
    process.kill(client.pid, "SIGKILL");
    await client.done;
    await waitFor(server, /\] 0\.0000-\d+\.\d+ sec +[\d.]+ [MG]Bytes/, 10_000);
    const out = server.text();
    expect(out).toMatch(/^tcp write failed: (Connection reset by peer|Broken pipe)\nshutdown failed: Transport endpoint is not connected$/m);
    // Still serving: the next client gets its test.
    const next = await stockPeer(peer)(["-c", "127.0.0.1", "-p", String(port), "-t", "0.5"]).done;
    expect(next.code, next.out).toBe(0);
    expect(next.out).toMatch(/\] 0\.0000-0\.\d+ sec/);
  } finally {
    server.kill();
    await server.done;
  }
}, 60_000);
