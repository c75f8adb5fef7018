import { describe, expect, test } from "bun:test";
import { expectSameConsole } from "../fixtures/ntttcp/windows-real.ts";
import { freePorts, waitBound } from "../support/processes.ts";
import { runWindowsNtttcp, windowsNtttcp } from "../support/windows-ntttcp.ts";
import { expectClose, expectOk, linuxTotalBytes, spawnOurs, windowsTotalBytes, type Finished } from "./ntttcp-harness.ts";

/**
 * Against the real NTttcp for Windows 5.40 under Wine (tests/support/windows-ntttcp.ts finds it; skipped when it is
 * not built). -ns only: Wine runs the token handshake too, but the token ports would be data port + 1000, outside
 * this file's range 35100-35199 (free ports in it are picked at run time: the range is also ephemeral).
 */

const words = (s: string) => s.split(/\s+/).filter(Boolean);
const T = 90_000;
const absent = windowsNtttcp === undefined;

/** Waits for a run, killing it (and failing) after `ms`: a receiver that never ends must not hang the suite. */
async function within(run: { done: Promise<Finished>; kill(): void }, ms: number, what: string): Promise<Finished> {
  let late = false;
  const t = setTimeout(() => ((late = true), run.kill()), ms);
  const r = await run.done;
  clearTimeout(t);
  if (late) throw new Error(`${what} did not end within ${ms / 1000} s:\n${r.stdout}`);
  return r;
}

describe("the real Windows NTttcp 5.40 (Wine)", () => {
  test.skipIf(absent)("count mode: the real sender → our receiver ends with every byte, and prints the real lines", async () => {
    const p = freePorts(35100, 35125, 1);
    const ours = spawnOurs(words(`--windows -r -m 1,*,127.0.0.1 -ns -n 5000 -p ${p}`));
    await waitBound(p, "tcp", 30_000);
    const real = await within(runWindowsNtttcp(words(`-s -m 1,*,127.0.0.1 -ns -n 5000 -p ${p}`)), 30_000, "the real sender");
    const rx = await within(ours, 15_000, "our receiver");
    expectOk(real, rx);
    // Our window opens once the connection is seen (polled): bytes before that instant are not counted.
    expectClose(windowsTotalBytes(rx.stdout), 5000 * 65536, 0.03);
    // Receiver and sender print the same tables: ours must have the real one's lines and CRLF.
    expectSameConsole(real.stdout, rx.stdout);
  }, T);

  test.skipIf(absent)("count mode: our sender → the real receiver, which ends and counts what we count", async () => {
    const p = freePorts(35125, 35150, 1);
    const real = runWindowsNtttcp(words(`-r -m 1,*,127.0.0.1 -ns -n 5000 -p ${p}`));
    await waitBound(p, "tcp", 30_000);
    const tx = await within(spawnOurs(words(`--windows -s -m 1,*,127.0.0.1 -ns -n 5000 -p ${p}`)), 30_000, "our sender");
    const rx = await within(real, 30_000, "the real receiver");
    expectOk(tx, rx);
    // The real receiver stops after 5000 reads, which fall short of 5000 full buffers when reads come back partial
    // (more of them on a loaded machine: 23 % short was seen), and closes: what our sender had left then finds no
    // reader. So the sender's total is bounded by -n buffers, and the two ends agree on what crossed.
    const sent = windowsTotalBytes(tx.stdout);
    expect(sent).toBeLessThanOrEqual(5000 * 65536);
    expect(sent).toBeGreaterThan(0.5 * 5000 * 65536);
    expectClose(windowsTotalBytes(rx.stdout), sent, 0.05);
    expectSameConsole(rx.stdout, tx.stdout);
  }, T);

  test.skipIf(absent)("count mode: the real -n 4000 sender → our -n 1000 receiver, which ends after its 1000 reads", async () => {
    const p = freePorts(35100, 35200, 1);
    const ours = spawnOurs(words(`--windows -r -m 1,*,127.0.0.1 -ns -n 1000 -p ${p}`));
    await waitBound(p, "tcp", 30_000);
    const real = await within(runWindowsNtttcp(words(`-s -m 1,*,127.0.0.1 -ns -n 4000 -p ${p}`)), 30_000, "the real sender");
    const rx = await within(ours, 15_000, "our receiver");
    // As the real receiver, ours closes after -n reads with the rest unread; the real sender takes the reset as an end.
    expectOk(real, rx);
    expect(rx.stdout).not.toContain("Unexpected disconnect");
    expect(windowsTotalBytes(rx.stdout)).toBeLessThanOrEqual(1000 * 65536);
    expect(windowsTotalBytes(real.stdout)).toBeLessThan(4000 * 65536);
  }, T);

  test.skipIf(absent)("UDP count mode: the real sender → our receiver, which ends after -n datagrams", async () => {
    const p = freePorts(35175, 35200, 1);
    const ours = spawnOurs(words(`--windows -r -u -m 1,*,127.0.0.1 -ns -n 1000 -p ${p}`));
    await waitBound(p, "udp", 30_000);
    const real = await within(runWindowsNtttcp(words(`-s -u -m 1,*,127.0.0.1 -ns -n 1000 -p ${p}`)), 30_000, "the real sender");
    const rx = await within(ours, 15_000, "our receiver");
    expectOk(real, rx);
    // Our clock starts at the first datagram seen (polled; compat/ntttcp/README.md): the first few can be missing.
    const bytes = windowsTotalBytes(rx.stdout);
    expect(bytes).toBeGreaterThan(0);
    expect(bytes).toBeLessThanOrEqual(1000 * 128);
  }, T);

  test.skipIf(absent)("time mode, 2 threads: the real sender → our receiver", async () => {
    const p = freePorts(35150, 35175, 2);
    const ours = spawnOurs(words(`--windows -r -m 2,*,127.0.0.1 -ns -t 2 -p ${p}`));
    // Each listener binds on its own Worker: wait for both.
    for (const q of [p, p + 1]) await waitBound(q, "tcp", 30_000);
    const real = await within(runWindowsNtttcp(words(`-s -m 2,*,127.0.0.1 -ns -t 2 -p ${p}`)), 30_000, "the real sender");
    const rx = await within(ours, 20_000, "our receiver");
    expectOk(real, rx);
    expectSameConsole(real.stdout, rx.stdout);
  }, T);

  // The Azure guide's receiver, read the ntttcp-for-linux way (sync on, no --windows): a real sync sender's tokens on
  // data port + 1000 and a real -ns sender's first bytes start it. Ports 36200-36299 and their token ports 37200-37299.
  for (const ns of ["", "-ns"]) {
    test.skipIf(absent)(`the default receiver (-r -m 1,*,IP -t 2 -P 1) takes the real ${ns || "sync"} sender`, async () => {
      const p = freePorts(36201, 36299, 1, [-1, 1000]);
      const ours = spawnOurs(words(`-r -m 1,*,127.0.0.1 -t 2 -P 1 -p ${p}`));
      await waitBound(p, "tcp", 30_000);
      const real = await within(runWindowsNtttcp(words(`-s -m 1,*,127.0.0.1 ${ns} -t 2 -p ${p}`)), 40_000, "the real sender");
      const rx = await within(ours, 20_000, "our receiver");
      expectOk(real, rx);
      // Each side times its own 2 s (Wine on a loaded machine can start the sender late): what we got is most of what
      // it sent, never more.
      const [got, sent] = [linuxTotalBytes(rx.stdout), windowsTotalBytes(real.stdout)];
      expect(got).toBeGreaterThan(0.5 * sent);
      expect(got).toBeLessThanOrEqual(1.05 * sent);
    }, T);
  }
});
