/**
 * For the native tests: a native server in its own process (tests/native/native-server.ts, until `anyperf serve`
 * lands), `anyperf client` through main.ts, both bounded in time and killed by pid after each test.
 */
import { afterEach } from "bun:test";
import { join } from "node:path";
import { assertFree, spawnProc, waitBound, type Proc } from "../support/processes.ts";
import { Results } from "../../src/report/result.ts";

const MAIN = join(import.meta.dir, "..", "..", "main.ts");
const SERVER = join(import.meta.dir, "native-server.ts");

export const client = (args: string[], limitMs = 40_000, host = "127.0.0.1"): Proc => spawnProc([process.execPath, MAIN, "client", host, ...args], limitMs);

/** Runs a client to its end and parses its --json document (failing with its stderr when it did not succeed). */
export async function clientJson(args: string[], host?: string): Promise<Results> {
  const r = await client([...args, "--json"], undefined, host).done;
  if (r.code !== 0) throw new Error(`client exited ${r.code}: ${r.stderr}`);
  return Results.parse(JSON.parse(r.stdout));
}

/** `start(port, args)` runs a native server and waits until it listens; each is killed after its test. */
export function nativeServers(): (port: number, args?: string[]) => Promise<Proc> {
  const running: Proc[] = [];
  afterEach(async () => {
    for (const s of running.splice(0)) {
      s.kill();
      await s.done;
    }
  });
  return async (port, args = []) => {
    assertFree(port);
    const s = spawnProc([process.execPath, SERVER, String(port), ...args], 60_000);
    running.push(s);
    await waitBound(port);
    return s;
  };
}
