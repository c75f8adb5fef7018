/**
 * `anyperf iperf -s` (TCP and UDP) with --allow and the --max-* limits against the stock iperf 2.1.8 client. iperf 2
 * has no refusal message: a refused TCP connection is closed (the client prints its write failure) and a refused
 * UDP flow is dropped (the client never gets its report ack); our server logs one line naming the limit and flag.
 */
import { describe, expect, test } from "bun:test";
import { hasTool, type Proc, serversPerTest, spawnProc, waitFor } from "./harness.ts";

const HAVE = hasTool(["iperf", "-v"], /iperf version 2\./);
const stock = (args: string[], ms = 20_000) => spawnProc(["iperf", ...args], ms);
const start = serversPerTest();
const server = (port: number, args: string[], udp = false): Promise<Proc> =>
  start("iperf", ["-s", "-p", String(port), ...(udp ? ["-u"] : []), ...args], port, udp ? "udp" : "tcp");

const both = (f: { stdout: string; stderr: string }) => f.stdout + f.stderr;

describe.skipIf(!HAVE)("iperf 2 TCP server limits with the stock client", () => {
  test("--allow: outside the list closed at accept and logged; inside served", async () => {
    const denied = await server(21101, ["--allow", "10.0.0.0/8"]);
    const allowed = await server(21102, ["--allow", "127.0.0.0/8"]);
    const [no, yes] = await Promise.all([stock(["-c", "127.0.0.1", "-p", "21101", "-t", "1"]).done, stock(["-c", "127.0.0.1", "-p", "21102", "-t", "1"]).done]);
    expect(both(no)).toMatch(/write failed: (Connection reset by peer|Broken pipe)/);
    expect(denied.stderr()).toMatch(/anyperf iperf: refused 127\.0\.0\.1 port \d+: not in --allow/);
    expect(denied.stdout()).not.toMatch(/connected with 127\.0\.0\.1/);
    expect(yes.code).toBe(0);
    // The server's clock runs from its accept to the client's EOF: just under or over the client's 1 s.
    await waitFor(allowed.stdout, /0\.0+-(0\.9|1\.)\d+ sec .*bits\/sec/);
    expect(allowed.stderr()).not.toContain("refused");
  }, 30_000);

  test("streams, duration and rate refused with a line naming the limit; a running test goes on", async () => {
    const s = await server(21103, ["--max-streams", "2", "--max-duration", "3", "--max-rate", "200M"]);
    const running = stock(["-c", "127.0.0.1", "-p", "21103", "-t", "2", "-P", "2", "-b", "50M"]);
    await Bun.sleep(500);
    const [streams, duration, rate] = await Promise.all([
      stock(["-c", "127.0.0.1", "-p", "21103", "-t", "1", "-P", "4"]).done,
      stock(["-c", "127.0.0.1", "-p", "21103", "-t", "10"]).done,
      stock(["-c", "127.0.0.1", "-p", "21103", "-t", "1", "-b", "300m"]).done,
    ]);
    for (const f of [streams, duration, rate]) expect(both(f)).toMatch(/write failed|Connection reset/);
    const log = s.stderr();
    expect(log).toContain("test asks for 4 streams; this server allows 2 (--max-streams)");
    expect(log).toContain("test asks for 10 s; this server allows 3 s (--max-duration)");
    expect(log).toMatch(/test asks for 300 Mbit\/s; this server allows 200 Mbit\/s \(--max-rate\)/);
    const r = await running.done;
    expect(r.code).toBe(0);
    expect(both(r)).not.toMatch(/write failed/);
    // As above: the server's interval runs accept to EOF, just under or over the client's 2 s (1.9990 s seen in CI).
    await waitFor(s.stdout, /\[SUM\] 0\.0+-(1\.9|2\.)\d+ sec/);
  }, 30_000);

  test("--max-duration ends a test by bytes (-n) at the limit", async () => {
    const s = await server(21104, ["--max-duration", "1"]);
    const t0 = Date.now();
    await stock(["-c", "127.0.0.1", "-p", "21104", "-n", "10G", "-b", "20M"], 15_000).done;
    expect(Date.now() - t0).toBeLessThan(6000);
    expect(s.stderr()).toMatch(/ended test from 127\.0\.0\.1 port \d+ after 1 s: this server allows 1 s \(--max-duration\)/);
  }, 30_000);

  test("--max-tests: a second client while one runs is refused; the first completes", async () => {
    const s = await server(21105, ["--max-tests", "1"]);
    const running = stock(["-c", "127.0.0.1", "-p", "21105", "-t", "2", "-b", "20M"]);
    await Bun.sleep(500);
    const busy = await stock(["-c", "127.0.0.1", "-p", "21105", "-t", "1"]).done;
    expect(both(busy)).toMatch(/write failed|Connection reset/);
    expect(s.stderr()).toContain("1 tests running; this server allows 1 at once (--max-tests)");
    expect((await running.done).code).toBe(0);
  }, 30_000);
});

describe.skipIf(!HAVE)("iperf 2 UDP server limits with the stock client", () => {
  test("--allow: a refused flow gets no ack and is logged once, not per datagram", async () => {
    const s = await server(21106, ["--allow", "10.0.0.0/8"], true);
    const no = await stock(["-c", "127.0.0.1", "-u", "-p", "21106", "-t", "1"]).done;
    expect(both(no)).toContain("did not receive ack of last datagram");
    expect(s.stderr().match(/refused 127\.0\.0\.1 port \d+: not in --allow/g)?.length).toBe(1);
  }, 30_000);

  test("clustered -su is a server too: the policy options are taken, not refused as client options", async () => {
    const s = await start("iperf", ["-su", "-p", "21108", "--allow", "127.0.0.0/8"], 21108, "udp");
    expect(s.stderr()).not.toContain("server option");
  }, 30_000);

  test("--max-rate and --max-streams refuse a UDP test; an allowed one gets its report", async () => {
    const s = await server(21107, ["--allow", "127.0.0.1", "--max-rate", "5M", "--max-streams", "1"], true);
    const [fast, many, ok] = await Promise.all([
      stock(["-c", "127.0.0.1", "-u", "-p", "21107", "-t", "1", "-b", "10M"]).done,
      stock(["-c", "127.0.0.1", "-u", "-p", "21107", "-t", "1", "-P", "2", "-b", "1M"]).done,
      stock(["-c", "127.0.0.1", "-u", "-p", "21107", "-t", "1", "-b", "1M"]).done,
    ]);
    expect(both(fast)).toContain("did not receive ack");
    expect(both(many)).toContain("did not receive ack");
    expect(both(ok)).toContain("Server Report:");
    const log = s.stderr();
    expect(log).toContain("this server allows 5 Mbit/s (--max-rate)");
    expect(log).toContain("test asks for 2 streams; this server allows 1 (--max-streams)");
  }, 40_000);
});
