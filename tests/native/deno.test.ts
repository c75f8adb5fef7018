import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { nativeServers, clientJson } from "./harness.ts";
import { spawnProc, waitBound } from "../support/processes.ts";
import { Results } from "../../src/report/result.ts";

/** The native mode runs from source under Deno too (node-compatible sockets): as the client, and as the server. */
const ROOT = join(import.meta.dir, "..", "..");
const DENO = join(ROOT, "node_modules", ".bin", "deno");
const start = nativeServers();
// Children inherit this: no update notice from Deno.
process.env.DENO_NO_UPDATE_CHECK = "1";

describe.skipIf(!existsSync(DENO))("native mode under Deno", () => {
  test("a Deno client against a Bun server: bytes reconcile, the server's half comes back", async () => {
    await start(31040);
    const f = await spawnProc([DENO, "run", "--allow-all", join(ROOT, "main.ts"), "client", "127.0.0.1", "-p", "31040", "-t", "1", "--json"], 60_000).done;
    expect(f.code).toBe(0);
    const r = Results.parse(JSON.parse(f.stdout));
    expect(r.totals.sent_bytes).toBeGreaterThan(0);
    expect(r.remote!.totals.received_bytes).toBe(r.totals.sent_bytes!);
  }, 90_000);

  test("a Bun client against a Deno server, both directions", async () => {
    const server = spawnProc([DENO, "run", "--allow-all", join(import.meta.dir, "native-server.ts"), "31041"], 90_000);
    try {
      await waitBound(31041, "tcp", 30_000);
      const r = await clientJson(["-p", "31041", "-t", "1", "--bidir"]);
      expect(r.remote!.totals.received_bytes).toBe(r.totals.sent_bytes!);
      expect(r.totals.received_bytes).toBe(r.remote!.totals.sent_bytes!);
    } finally {
      server.kill();
      await server.done;
    }
  }, 90_000);
});
