/**
 * `anyperf ntttcp -r` (Linux sync mode) with --allow and --max-duration, driven by anyperf's own ntttcp sender (no
 * stock ntttcp on this machine). The sync protocol cannot say no: a refused sender sees its sync connection close
 * and fails; the receiver logs the reason as an ERR line.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { anyperf, assertFree, waitBound, waitFor, type Proc } from "./harness.ts";

const procs: Proc[] = [];
afterEach(async () => {
  for (const p of procs.splice(0)) {
    p.kill();
    await p.done;
  }
});

async function receiver(port: number, args: string[]): Promise<Proc> {
  assertFree(port);
  assertFree(port - 1);
  const r = anyperf("ntttcp", ["-r127.0.0.1", "-P", "1", "-p", String(port), ...args], 30_000);
  procs.push(r);
  // Sync listens on port - 1 once the data listeners are up.
  await waitBound(port - 1);
  return r;
}

const sender = (port: number, args: string[]) => anyperf("ntttcp", ["-s127.0.0.1", "-P", "1", "-n", "1", "-p", String(port), ...args], 20_000).done;

describe("ntttcp receiver access and limits", () => {
  test("--allow: a sender outside the list is closed at the sync accept and fails; the receiver logs it", async () => {
    const r = await receiver(21301, ["-t", "1", "--allow", "10.0.0.0/8"]);
    const s = await sender(21301, ["-t", "1"]);
    expect(s.code).not.toBe(0);
    expect(s.stdout + s.stderr).toContain("sync");
    await waitFor(r.stdout, /ERR : refused 127\.0\.0\.1 port \d+: not in --allow/);
  }, 30_000);

  test("--allow with the sender's network: a normal run", async () => {
    const r = await receiver(21311, ["-t", "1", "--allow", "127.0.0.0/8"]);
    const s = await sender(21311, ["-t", "1"]);
    expect(s.code).toBe(0);
    const done = await r.done;
    expect(done.code).toBe(0);
    expect(done.stdout).toMatch(/throughput\s*:/i);
    expect(done.stdout).not.toContain("refused");
  }, 30_000);

  test("--max-duration: a sender negotiating a longer cycle is refused, naming the limit and flag", async () => {
    const r = await receiver(21321, ["-t", "1", "--max-duration", "3"]);
    const s = await sender(21321, ["-t", "5"]);
    expect(s.code).not.toBe(0);
    const done = await r.done;
    expect(done.code).toBe(1);
    expect(done.stdout).toContain("ERR : refused the test: sender asks for 5 s; this receiver allows 3 s (--max-duration)");
    expect(done.stderr).toContain("anyperf: refused the sender's test");
  }, 30_000);

  test("--max-duration below the receiver's own -t is a usage error", async () => {
    const r = await anyperf("ntttcp", ["-r127.0.0.1", "-P", "1", "-p", "21331", "-t", "10", "--max-duration", "5"]).done;
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("this receiver's own cycle (-W/-t/-C) is 10 s, above --max-duration 5");
  }, 20_000);

  test("--allow in -N mode: the data Workers drop TCP connections and UDP datagrams from outside, logged once each", async () => {
    for (const [port, proto, extra] of [
      [21341, "tcp", []],
      [21351, "udp", ["-u"]],
    ] as const) {
      assertFree(port, proto);
      const r = anyperf("ntttcp", ["-r127.0.0.1", "-N", "-P", "1", "-p", String(port), "-t", "2", ...extra, "--allow", "10.0.0.0/8"], 20_000);
      procs.push(r);
      await waitBound(port, proto);
      await anyperf("ntttcp", ["-s127.0.0.1", "-N", "-P", "1", "-n", "1", "-p", String(port), "-t", "1", ...extra, ...(proto === "udp" ? ["-B", "10M"] : [])], 20_000).done;
      // Nothing admitted, so the receiver never starts its clock (it starts at the first connection or datagram).
      await waitFor(r.stderr, /refused 127\.0\.0\.1 port \d+ on a data port: not in --allow/);
      r.kill();
      const done = await r.done;
      expect(done.stdout).not.toMatch(/total bytes\s*:[1-9]/);
      // A flood of datagrams is a few lines, not one per datagram.
      expect(done.stderr.split("\n").filter((l) => l.includes("refused")).length).toBeLessThanOrEqual(11);
    }
  }, 40_000);
});
