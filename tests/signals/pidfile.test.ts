/**
 * Issue 21 items 18 and 15: iperf3 -I PIDFILE. At exit only the regular file we wrote (still holding our pid) is
 * removed, never a device node or a file someone else wrote there since; a pid file in a missing directory fails in
 * one line before the test (tests/integration/output-paths.test.ts). Ports 33100-33199, free ones picked at run time (the range is also the kernel's ephemeral one).
 */
import { expect, test } from "bun:test";
import { existsSync, lstatSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { freePorts, waitBound } from "../support/processes.ts";
import { anyperf, dump, interruptAfter, scratch, sleep } from "./harness.ts";

async function waitFile(path: string, ms = 10_000): Promise<void> {
  const end = performance.now() + ms;
  while (!existsSync(path)) {
    if (performance.now() > end) throw new Error(`${path} never appeared`);
    await sleep(20);
  }
}

test("the pid file we wrote holds our pid and is removed at exit", async () => {
  const pid = join(scratch(), "iperf3.pid");
  const s = anyperf(["iperf3", "-s", "-p", String(freePorts(33100, 33200, 1)), "-I", pid]);
  await waitFile(pid);
  expect(readFileSync(pid, "utf8").trim()).toBe(String(s.pid));
  const f = await interruptAfter(s, 300, "SIGINT");
  expect(f.code, dump(f)).toBe(1);
  expect(existsSync(pid)).toBe(false);
}, 20_000);

test("a pid file replaced by someone else's is left alone", async () => {
  const pid = join(scratch(), "iperf3.pid");
  const s = anyperf(["iperf3", "-s", "-p", String(freePorts(33100, 33200, 1)), "-I", pid]);
  await waitFile(pid);
  writeFileSync(pid, "4242\n");
  const f = await interruptAfter(s, 300, "SIGTERM");
  expect(f.code, dump(f)).toBe(1);
  expect(readFileSync(pid, "utf8")).toBe("4242\n");
}, 20_000);

test.skipIf(process.getuid?.() !== 0)("a device node given as the pid file is written through and never unlinked", async () => {
  const dir = scratch();
  const dev = join(dir, "null");
  // A private /dev/null (char 1,3) in the test's own directory: removing it would harm nothing else.
  expect(Bun.spawnSync(["mknod", dev, "c", "1", "3"]).exitCode).toBe(0);
  const port = freePorts(33100, 33200, 1);
  const s = anyperf(["iperf3", "-s", "-p", String(port), "-I", dev]);
  await waitBound(port);
  const f = await interruptAfter(s, 0, "SIGINT");
  expect(f.code, dump(f)).toBe(1);
  expect(f.stderr).not.toMatch(/\n\s+at /);
  expect(lstatSync(dev).isCharacterDevice()).toBe(true);
}, 20_000);
