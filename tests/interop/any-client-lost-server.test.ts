/**
 * A server (stock or anyperf serve) killed mid-test (SIGKILL, as a crash or an OOM kill ends it) under `anyperf client`: what this end
 * measured is printed, the drop is named, and the exit code is 1. Before, against iperf 2 the run looked whole (exit
 * 0, a 1.85 s window of a -t 4); against iperf3 and anyperf serve nothing was printed but the error.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { Results } from "../../src/report/result.ts";
import { iperf2Peers, iperf3Peers } from "../support/stock-peers.ts";
import { freePorts, spawnProc, waitBound, waitConnected, type Proc } from "../support/processes.ts";

const MAIN = join(import.meta.dir, "..", "..", "main.ts");
const KILL_AFTER_MS = 1_500;

const running: Proc[] = [];
afterEach(async () => {
  for (const p of running.splice(0)) {
    p.kill();
    await p.done;
  }
});

/**
 * Starts `cmd` on `port`, runs `anyperf client` with `args --json`, and SIGKILLs the server KILL_AFTER_MS after the
 * test's `connections` to that port are up (iperf3: control and data; iperf 2: data; anyperf serve: control, its
 * data comes to other ports). Counted from the client's spawn, a start from source on a loaded machine could leave
 * the server killed before the test began or during the probe: refused, and no figures to print (one CI run).
 */
async function killedMidTest(cmd: string[], port: number, args: string[], connections: number): Promise<{ code: number; r: Results }> {
  const s = spawnProc(cmd, 60_000);
  running.push(s);
  await waitBound(port, "tcp");
  const client = spawnProc([process.execPath, MAIN, "client", `127.0.0.1:${port}`, ...args, "-t", "4", "--json", "--no-history"], 60_000);
  running.push(client);
  await waitConnected(port, connections);
  const timer = setTimeout(() => s.kill("SIGKILL"), KILL_AFTER_MS);
  const f = await client.done;
  clearTimeout(timer);
  return { code: f.code ?? -1, r: Results.parse(JSON.parse(f.stdout)) };
}

for (const peer of iperf2Peers()) {
  describe.skipIf(peer.version === undefined)(`anyperf client, ${peer.label} killed mid-test`, () => {
    for (const dir of [[], ["-R"]]) {
      test(`-t 4 ${dir.join(" ")}: the seconds it ran are measured and said short of -t; exit 1`, async () => {
        const port = freePorts(27000, 28000, 1);
        const { code, r } = await killedMidTest([peer.command, "-s", "-p", String(port)], port, ["--peer", "iperf", ...dir], 1);
        expect(code).toBe(1);
        expect(r.summary.bytes).toBeGreaterThan(1e6);
        expect(r.summary.seconds).toBeLessThan(3);
        expect(r.errors).toContainEqual(expect.stringMatching(new RegExp(`^iperf server at 127\\.0\\.0\\.1:${port} ended the test after \\d\\.\\d\\d s of the 4 s asked \\(-t\\): it stopped or was killed mid-test`)));
      }, 60_000);
    }
  });
}

for (const peer of iperf3Peers()) {
  describe.skipIf(peer.version === undefined)(`anyperf client, ${peer.label} killed mid-test`, () => {
    for (const dir of [[], ["-R"]]) {
      test(`-t 4 ${dir.join(" ")}: this end's figures are kept beside iperf3's own error; exit 1`, async () => {
        const port = freePorts(25000, 26000, 1);
        const { code, r } = await killedMidTest([peer.command, "-s", "-p", String(port)], port, dir, 2);
        expect(code).toBe(1);
        expect(r.summary.bytes).toBeGreaterThan(1e6);
        expect(r.remote).toBeUndefined();
        expect(r.errors).toContain("the server sent no results");
        expect(r.errors.some((e) => /control socket has closed unexpectedly|Connection reset|unexpectedly/i.test(e))).toBe(true);
      }, 60_000);
    }
  });
}

describe("anyperf client, anyperf serve killed mid-test", () => {
  for (const dir of [[], ["-R"]]) {
    test(`-t 4 ${dir.join(" ")}: this end's figures are kept beside the lost control connection; exit 1`, async () => {
      const port = freePorts(28000, 29000, 1);
      const { code, r } = await killedMidTest([process.execPath, MAIN, "serve", "-p", String(port)], port, dir, 1);
      expect(code).toBe(1);
      expect(r.summary.bytes).toBeGreaterThan(1e6);
      expect(r.summary.seconds).toBeLessThan(3);
      // Its phase is "running", or "finishing" when our streams' end (the server's sockets closed) came first.
      expect(r.errors).toContainEqual(expect.stringMatching(new RegExp(`^127\\.0\\.0\\.1:${port}: the server closed the control connection \\(phase (running|finishing)\\); see the server's log$`)));
    }, 60_000);
  }
});
