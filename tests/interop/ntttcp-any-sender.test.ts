import { describe, expect, test } from "bun:test";
import { freePorts, waitBound } from "../support/processes.ts";
import { expectClose, expectOk, linuxTotalBytes, spawnOurs, windowsTotalBytes } from "./ntttcp-harness.ts";

/**
 * The default receiver (`ntttcp -r -m 2,*,IP -t 2`, read the ntttcp-for-linux way, sync on) takes every kind of
 * sender, as `anyperf serve` does (docs/protocols/ntttcp-interop.md §5.2): Linux sync, Windows sync (tokens on data
 * port + offset; 100 here so the ports stay near each other, the product uses 1000), and no-sync senders of both tools.
 * Ports picked free from 24400 up (tokens 24500 up); the real 5.40 sender's pairings are in ntttcp-windows-real.test.ts.
 */

const words = (s: string) => s.split(/\s+/).filter(Boolean);
const env = { ANYPERF_NTTTCP_TOKEN_OFFSET: "100" };

async function againstDefaultReceiver(sender: (port: number) => string, total: (stdout: string) => number) {
  const port = freePorts(24401, 24499, 2, [-1, 100]);
  const rx = spawnOurs(words(`-r -m 2,*,127.0.0.1 -t 2 -p ${port}`), env);
  for (const q of [port - 1, port, port + 1]) await waitBound(q, "tcp", 15_000);
  const tx = spawnOurs(words(sender(port)), env);
  const kill = setTimeout(() => (rx.kill(), tx.kill()), 30_000);
  const [r, s] = await Promise.all([rx.done, tx.done]);
  clearTimeout(kill);
  expectOk(r, s);
  expect(r.stdout).toContain("INFO: Test cycle finished.");
  expectClose(linuxTotalBytes(r.stdout), total(s.stdout), 0.05);
}

describe("the default (sync) receiver takes any sender", () => {
  test("a Windows sync sender (token exchanges, no --windows on the receiver)", () => againstDefaultReceiver((p) => `--windows -s -m 2,*,127.0.0.1 -t 2 -p ${p} -thr 50000`, windowsTotalBytes), 60_000);
  test("a Windows -ns sender", () => againstDefaultReceiver((p) => `--windows -s -m 2,*,127.0.0.1 -ns -t 2 -p ${p} -thr 50000`, windowsTotalBytes), 60_000);
  test("a Linux -N sender", () => againstDefaultReceiver((p) => `-s127.0.0.1 -P 2 -n 1 -N -t 2 -p ${p} -B 800M`, linuxTotalBytes), 60_000);
  test("a Linux sync sender", () => againstDefaultReceiver((p) => `-s127.0.0.1 -P 2 -n 1 -t 2 -p ${p} -B 800M`, linuxTotalBytes), 60_000);
});
