import { afterAll, describe, expect, test } from "bun:test";
import { createServer, type Server } from "node:net";
import { spawnProc } from "../support/processes.ts";
import { anyperf, TOKEN_OFFSET } from "./harness.ts";

/** What `anyperf serve` says when it cannot start: one line naming the port, the server and the flag that moves it. */

const held: Server[] = [];
afterAll(() => {
  for (const s of held) s.close();
});

function hold(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen({ host: "0.0.0.0", port }, () => resolve());
    held.push(s);
  });
}

async function serveFails(args: string[], code?: number) {
  const f = await spawnProc([...anyperf(), "serve", ...args], 20_000, { ANYPERF_NTTTCP_TOKEN_OFFSET: String(TOKEN_OFFSET) }).done;
  expect(f.code).not.toBe(0);
  if (code !== undefined) expect(f.code).toBe(code);
  expect(f.stderr.trim().split("\n")).toHaveLength(1);
  expect(f.stderr).not.toContain("    at ");
  return f.stderr.trim();
}

/** Every listener on its own port in 30400-30499, ntttcp's range from 30420 (sync 30419, tokens 30520-30535). */
const base = ["-p", "30400", "--iperf3", "30401", "--iperf", "30402", "--netserver", "30403", "--ntttcp", "30420"];

describe("anyperf serve: ports it cannot have", () => {
  test("a port in use names the server and its flag", async () => {
    await hold(30401);
    expect(await serveFails(base)).toBe("anyperf: port 30401 in use (iperf3): pass --iperf3 PORT or --iperf3 off");
  }, 30_000);

  test("ntttcp's sync port (PORT-1) in use names --ntttcp", async () => {
    await hold(30419);
    expect(await serveFails([...base, "--iperf3", "off"])).toBe("anyperf: port 30419 in use (ntttcp): pass --ntttcp PORT or --ntttcp off");
  }, 30_000);

  test("the native port in use names -p", async () => {
    await hold(30430);
    expect(await serveFails(["-p", "30430", "--iperf3", "off", "--iperf", "off", "--netserver", "off", "--ntttcp", "off"])).toBe("anyperf: port 30430 in use (anyperf): pass -p PORT");
  }, 30_000);

  test("two servers asked for one port: a usage error naming both flags, exit 2", async () => {
    const err = await serveFails(["-p", "30440", "--iperf3", "30441", "--netserver", "30441", "--iperf", "off", "--ntttcp", "off"], 2);
    expect(err).toContain("port 30441 is asked for by iperf3 (--iperf3) and netserver (--netserver)");
  }, 30_000);

  test("a bad port value names its flag", async () => {
    expect(await serveFails(["--iperf3", "nope"], 2)).toBe("anyperf: --iperf3 nope: pass a port 1-65535 or off");
  }, 30_000);
});
