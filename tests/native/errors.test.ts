import { afterEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { client, nativeServers } from "./harness.ts";
import { assertFree, hasTool, sleep, spawnProc, waitBound, type Proc } from "../support/processes.ts";

const start = nativeServers();
const MAIN = join(import.meta.dir, "..", "..", "main.ts");
const HAVE_IPERF3 = hasTool(["iperf3", "--version"], /iperf 3\./);

const peers: Proc[] = [];
afterEach(async () => {
  for (const p of peers.splice(0)) {
    p.kill();
    await p.done;
  }
});

/**
 * One line on stderr naming the cause and the fix, exit code != 0, within `ms`; stdout holds at most the interval
 * lines of what ran before the failure (issue 21 item 14), no report.
 */
async function failsWith(args: string[], pattern: RegExp, ms = 12_000): Promise<string> {
  const t0 = performance.now();
  const r = await client(args, 30_000).done;
  expect(performance.now() - t0).toBeLessThan(ms);
  expect(r.code).not.toBe(0);
  const lines = r.stderr.trim().split("\n");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(pattern);
  for (const l of r.stdout.split("\n").filter((x) => x !== "")) expect(l).toMatch(/^\[( ID|SUM|\s*\d+)\] /);
  return lines[0]!;
}

describe("anyperf client: every failure is one line with cause and fix, and nothing hangs", () => {
  test("closed port", async () => {
    assertFree(31020);
    await failsWith(["-p", "31020", "-t", "1"], /connection to 127\.0\.0\.1:31020 refused: start 'anyperf serve' there, or pass its port with -p/);
  });

  test("missing and wrong token; the right one runs", async () => {
    const server = await start(31021, ["--token", "s3cret"]);
    await failsWith(["-p", "31021", "-t", "1"], /refused: this server needs a token: pass --token/);
    await failsWith(["-p", "31021", "-t", "1", "--token", "guess"], /refused: wrong token: pass --token/);
    const ok = await client(["-p", "31021", "-t", "0.5", "--token", "s3cret"]).done;
    expect(ok.code).toBe(0);
    // The server says no in its own log too.
    expect(server.stderr()).toMatch(/wrong token/);
  });

  test("refused by the server's limits, in the limit's own words and flag", async () => {
    await start(31022, ["--max-streams", "2", "--max-duration", "3", "--max-rate", "100M"]);
    await failsWith(["-p", "31022", "-t", "1", "-P", "3", "-b", "1M"], /refused: .*3 streams; this server allows 2 \(--max-streams\)/);
    await failsWith(["-p", "31022", "-t", "10", "-b", "1M"], /refused: .*10 s; this server allows 3 s \(--max-duration\)/);
    await failsWith(["-p", "31022", "-t", "1", "-b", "1G"], /refused: .*this server allows 100 Mbit\/s \(--max-rate\)/);
  });

  test("--max-rate also holds an unlimited test to what it moves: ended once measured above it", async () => {
    await start(31029, ["--max-rate", "100M"]);
    await failsWith(["-p", "31029", "-t", "8"], /127\.0\.0\.1:31029: server error: test ran at .* over 2(\.\d)? s; this server allows 100 Mbit\/s \(--max-rate\): pass -b/, 8_000);
    const paced = await client(["-p", "31029", "-t", "3", "-b", "50M"]).done;
    expect(paced.code).toBe(0);
  });

  test("busy: one test too many is refused with --max-tests", async () => {
    await start(31023, ["--max-tests", "1"]);
    const first = client(["-p", "31023", "-t", "3"]);
    await sleep(1000);
    await failsWith(["-p", "31023", "-t", "1"], /refused: .*1 tests running; this server allows 1 at once \(--max-tests\)/);
    expect((await first.done).code).toBe(0);
  });

  test("a server whose --allow leaves this host out: closed before answering, and the line says so", async () => {
    await start(31028, ["--allow", "10.0.0.0/8"]);
    await failsWith(["-p", "31028", "-t", "1"], /127\.0\.0\.1:31028 closed the connection before answering: not an anyperf server .*or its --allow does not admit this host/, 3_000);
  });

  test.skipIf(!HAVE_IPERF3)("--peer anyperf and stock iperf3 -s on the port: not an anyperf server, at once", async () => {
    assertFree(31024);
    peers.push(spawnProc(["iperf3", "-s", "-p", "31024", "-1"], 20_000));
    await waitBound(31024);
    await failsWith(["-p", "31024", "-t", "1", "--peer", "anyperf"], /127\.0\.0\.1:31024 is not an anyperf server .*point -p at the port of 'anyperf serve'/, 3_000);
  });

  // A netserver is a peer the probe now finds (tests/interop/any-client.test.ts); a port that accepts and never
  // answers is what is left: no answer to the probe (3 s), none within the handshake deadline (5 s).
  test("a server that accepts and never answers: one line after the probe and the handshake deadline", async () => {
    const silent = Bun.listen({ hostname: "127.0.0.1", port: 31025, socket: { data() {} } });
    try {
      await failsWith(["-p", "31025", "-t", "1"], /127\.0\.0\.1:31025 accepted the connection but gave no anyperf answer within 5 s .*point -p/, 14_000);
    } finally {
      silent.stop(true);
    }
  });

  test("Ctrl+C while waiting for the server's answer ends the client at once (exit 130)", async () => {
    const silent = Bun.listen({ hostname: "127.0.0.1", port: 31026, socket: { data() {} } });
    try {
      const p = Bun.spawn([process.execPath, MAIN, "client", "127.0.0.1", "-p", "31026", "-t", "1"], { stdout: "pipe", stderr: "pipe" });
      await sleep(1500);
      const t0 = performance.now();
      p.kill("SIGINT");
      const code = await p.exited;
      expect(performance.now() - t0).toBeLessThan(1500);
      expect(code).toBe(130);
      expect(await new Response(p.stderr).text()).toMatch(/^anyperf: interrupted/);
    } finally {
      silent.stop(true);
    }
  });

  test("Ctrl+C during the run prints both ends' partial figures, the server's included (exit 130)", async () => {
    await start(31027);
    const p = Bun.spawn([process.execPath, MAIN, "client", "127.0.0.1", "-p", "31027", "-t", "20", "--json"], { stdout: "pipe", stderr: "pipe" });
    await sleep(3000);
    p.kill("SIGINT");
    const code = await p.exited;
    expect(code).toBe(130);
    const r = JSON.parse(await new Response(p.stdout).text());
    expect(r.interrupted).toBe(true);
    expect(r.remote.totals.received_bytes).toBe(r.totals.sent_bytes);
    expect(r.summary.seconds).toBeLessThan(10);
  });
});
