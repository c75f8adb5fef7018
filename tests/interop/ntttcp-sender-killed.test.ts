import { describe, expect, test } from "bun:test";
import { freePorts, waitBound } from "../support/processes.ts";
import { runWindowsNtttcp, windowsNtttcp } from "../support/windows-ntttcp.ts";
import { linuxTotalBytes, sleep, spawnOurs, windowsTotalBytes, type Finished } from "./ntttcp-harness.ts";

/**
 * A receiver whose sender is killed (SIGKILL: its sockets close mid-test) reports it as the peer does: 5.40's threads
 * each fail with "Unexpected disconnect", the run says one or more threads failed, the results follow and the exit
 * status is 0 (docs/protocols/ntttcp-windows.md §5.1); ntttcp-for-linux says nothing and prints its results (it then
 * never exits; we exit 0). Ports picked free from 24600 up.
 */

const words = (s: string) => s.split(/\s+/).filter(Boolean);
const T = 90_000;
const UNEXPECTED = "ERROR: DoSendsReceives failed: Unexpected disconnect\r\n";

/** Until each of `ports` holds an established connection (ss), for at most `ms`. */
async function connected(ports: number[], ms: number): Promise<void> {
  const has = (port: number) => Bun.spawnSync(["ss", "-Htn", "state", "established", `( sport = :${port} )`]).stdout.toString().trim() !== "";
  for (const end = Date.now() + ms; Date.now() < end && !ports.every(has); ) await sleep(100);
}

/** Our receiver on free ports; the sender started on them and SIGKILLed `afterMs` later. */
async function killedMidway(receiver: string, sender: (port: number) => { kill(signal?: NodeJS.Signals): void }, afterMs = 2500): Promise<Finished> {
  const port = freePorts(24601, 24699, 2);
  const rx = spawnOurs(words(`${receiver} -p ${port}`));
  for (const q of [port, port + 1]) await waitBound(q, "tcp", 15_000);
  const tx = sender(port);
  // Killed only once connected: a sender under Wine on a loaded machine can take longer than `afterMs` to start.
  await connected([port, port + 1], 30_000);
  await sleep(afterMs);
  tx.kill("SIGKILL");
  const guard = setTimeout(() => rx.kill(), 30_000);
  const r = await rx.done;
  clearTimeout(guard);
  return r;
}

function expectWindowsFailures(r: Finished): void {
  expect(r.code).toBe(0);
  expect(r.stdout.split(UNEXPECTED).length - 1).toBe(2);
  for (const i of [0, 1]) expect(r.stdout).toContain(`ERROR: StartSenderReceiver in thread: ${i} failed: error in send/recv\r\n`);
  expect(r.stdout).toContain("ERROR: DoWork failed: one or more worker threads failed\r\n");
  // The failures come before the tables, which still hold what was received.
  expect(r.stdout.indexOf("ERROR: main failed: one or more worker threads failed\r\n")).toBeLessThan(r.stdout.indexOf("#####  Totals:  #####"));
  expect(windowsTotalBytes(r.stdout)).toBeGreaterThan(0);
}

describe("the sender is killed mid-test", () => {
  test("Windows dialect: each thread fails with Unexpected disconnect, the results follow, exit 0 (as 5.40)", async () => {
    const r = await killedMidway("--windows -r -m 2,*,127.0.0.1 -ns -t 5", (p) => spawnOurs(words(`--windows -s -m 2,*,127.0.0.1 -ns -t 5 -p ${p} -thr 50000`)));
    expectWindowsFailures(r);
  }, T);

  test.skipIf(windowsNtttcp === undefined)("Windows dialect, the real 5.40 sender killed (Wine)", async () => {
    const r = await killedMidway("--windows -r -m 2,*,127.0.0.1 -ns -t 6", (p) => runWindowsNtttcp(words(`-s -m 2,*,127.0.0.1 -ns -t 6 -p ${p}`)), 2500);
    expectWindowsFailures(r);
  }, T);

  test("ntttcp-for-linux dialect: the results, no error, exit 0 (1.4.3 prints the same and then hangs)", async () => {
    const r = await killedMidway("-r127.0.0.1 -P 2 -N -t 4", (p) => spawnOurs(words(`-s127.0.0.1 -P 2 -n 1 -N -t 4 -p ${p} -B 800M`)));
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain("ERR");
    expect(linuxTotalBytes(r.stdout)).toBeGreaterThan(0);
  }, T);
});
