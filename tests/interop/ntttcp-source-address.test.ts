import { describe, expect, test } from "bun:test";
import * as net from "node:net";
import { freePorts } from "../support/processes.ts";
import { spawnOurs } from "./ntttcp-harness.ts";

/**
 * The sender's source address (Linux -a, Windows -nic) binds its sync and token sockets too, as both originals do, so
 * a receiver (and serve, which groups a test by peer address) sees one peer. Ports picked free from 24700 up.
 */

const words = (s: string) => s.split(/\s+/).filter(Boolean);

/** A listener that records each peer's address; `answer` writes what the peer expects before closing. */
function recorder(port: number, answer?: Uint8Array) {
  const peers: string[] = [];
  const srv = net.createServer((s) => {
    peers.push(s.remoteAddress ?? "?");
    s.on("error", () => {});
    s.on("data", () => {});
    if (answer) s.end(answer);
    else s.destroy();
  });
  const up = new Promise<void>((r) => srv.listen({ host: "127.0.0.1", port }, () => r()));
  return { peers, up, close: () => srv.close() };
}

describe("the sender's source address binds its control sockets", () => {
  test("Linux -a: the sync connection comes from that address", async () => {
    const p = freePorts(24701, 24799, 1, [-1]);
    const sync = recorder(p - 1);
    await sync.up;
    const tx = await spawnOurs(words(`-s127.0.0.1 -a 127.0.0.2 -P 1 -n 1 -t 1 -p ${p}`)).done;
    sync.close();
    expect(tx.code).not.toBe(0);
    expect(sync.peers).toEqual(["127.0.0.2"]);
  }, 30_000);

  test("Windows -nic: the token connection comes from that address, like the data connection", async () => {
    const p = freePorts(24701, 24799, 1, [100]);
    const data = net.createServer((s) => (s.on("data", () => {}), s.on("error", () => {})));
    const dataPeers: string[] = [];
    data.on("connection", (s) => dataPeers.push(s.remoteAddress ?? "?"));
    await new Promise<void>((r) => data.listen({ host: "127.0.0.1", port: p }, () => r()));
    const token = recorder(p + 100, Uint8Array.of(0x58));
    await token.up;
    const tx = spawnOurs(words(`--windows -s -m 1,*,127.0.0.1 -nic 127.0.0.2 -t 1 -p ${p}`), { ANYPERF_NTTTCP_TOKEN_OFFSET: "100" });
    const r = await tx.done;
    data.close();
    token.close();
    expect(dataPeers).toEqual(["127.0.0.2"]);
    expect(token.peers).toEqual(["127.0.0.2"]);
    expect(r.code).toBe(0);
  }, 30_000);
});
