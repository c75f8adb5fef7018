import { afterAll, expect, test } from "bun:test";
import { join } from "node:path";
import { locate } from "../../src/fleet/locate.ts";
import { startStatusServer, type StatusServer } from "../../src/status/server.ts";
import { TestRunSource } from "../../src/status/test-run-source.ts";
import { freePorts, spawnProc } from "../support/processes.ts";

/**
 * `anyperf locate`: two serves' status endpoints on one port at two loopback addresses (as two pods of a headless
 * Service would be), labelled with their nodes; the name "resolves" to both.
 */

const PORT = freePorts(41700, 41800, 1);
const TOKEN = "locate-token";
const servers: StatusServer[] = [];
for (const [host, node] of [["127.0.0.1", "node-a"], ["127.0.0.2", "node-b"]] as const) {
  const source = new TestRunSource({ mode: "serve", role: "server", persistent: true, labels: { node, pod: `anyperf-${node}` } });
  servers.push(startStatusServer({ host, port: PORT, token: TOKEN }, source));
}
afterAll(async () => {
  for (const s of servers) await s.stop();
});
const both = async () => ["127.0.0.2", "127.0.0.1"];

test("the address of the serve whose node label is NODE", async () => {
  expect(await locate({ service: "anyperf", node: "node-b", port: PORT, token: TOKEN, resolve: both })).toBe("127.0.0.2");
  expect(await locate({ service: "anyperf", node: "node-a", port: PORT, token: TOKEN, resolve: both })).toBe("127.0.0.1");
});

test("no serve on that node: one line naming what each address said", async () => {
  await expect(locate({ service: "anyperf", node: "node-z", port: PORT, token: TOKEN, resolve: both })).rejects.toThrow(
    /^locate: no serve of anyperf runs on node node-z \(127\.0\.0\.1 on node-a; 127\.0\.0\.2 on node-b\); check the node name/,
  );
  await expect(locate({ service: "anyperf", node: "node-b", port: PORT, resolve: both })).rejects.toThrow(/127\.0\.0\.2: HTTP 401 \(pass the status token\)/);
  await expect(locate({ service: "anyperf", node: "node-b", port: PORT, token: TOKEN, resolve: async () => [] })).rejects.toThrow(/resolves to no address/);
});

test("anyperf locate SERVICE NODE prints the address; the token comes from the environment", async () => {
  const main = join(import.meta.dir, "../../main.ts");
  // localhost resolves to 127.0.0.1 (and perhaps ::1, where nothing listens: that address is only reported).
  const ok = await spawnProc([process.execPath, main, "locate", "localhost", "node-a", "--port", String(PORT)], 20_000, { ANYPERF_TOKEN: TOKEN }).done;
  expect(ok.stderr).toBe("");
  expect(ok.stdout).toBe("127.0.0.1\n");
  expect(ok.code).toBe(0);
  const none = await spawnProc([process.execPath, main, "locate", "localhost", "node-b", "--port", String(PORT)], 20_000, { ANYPERF_TOKEN: TOKEN }).done;
  expect(none.code).toBe(1);
  expect(none.stderr.trim().split("\n")).toHaveLength(1);
  expect(none.stderr).toContain("no serve of localhost runs on node node-b");
  const usage = await spawnProc([process.execPath, main, "locate", "localhost"], 20_000).done;
  expect(usage.code).toBe(2);
  expect(usage.stderr).toContain("locate takes SERVICE and NODE");
}, 60_000);
