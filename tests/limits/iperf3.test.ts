/**
 * `anyperf iperf3 -s` with --allow and the --max-* limits against the stock iperf3 3.12 client: each refusal
 * reaches the stock client as an error it prints, our server logs the limit and its flag, and a test already
 * running is not disturbed.
 */
import { describe, expect, test } from "bun:test";
import { anyperf, hasTool, type Proc, serversPerTest, spawnProc } from "./harness.ts";

const HAVE = hasTool(["iperf3", "-v"], /iperf 3\./);
const stock = (args: string[], ms = 20_000) => spawnProc(["iperf3", ...args], ms);
const start = serversPerTest();
const server = (port: number, args: string[]): Promise<Proc> => start("iperf3", ["-s", "-p", String(port), ...args], port);

describe.skipIf(!HAVE)("iperf3 server limits with the stock client", () => {
  test("--allow: a peer outside the list is closed at accept; inside it is served", async () => {
    const denied = await server(21001, ["--allow", "10.0.0.0/8"]);
    const allowed = await server(21002, ["--allow", "127.0.0.0/8,::1"]);
    const [no, yes] = await Promise.all([
      stock(["-c", "127.0.0.1", "-p", "21001", "-t", "1"]).done,
      stock(["-c", "127.0.0.1", "-p", "21002", "-t", "1"]).done,
    ]);
    expect(no.code).not.toBe(0);
    expect(no.stderr + no.stdout).toMatch(/iperf3: error - (control socket has closed unexpectedly|unable to (send|receive) .*)/);
    expect(denied.stderr()).toMatch(/iperf3: refused 127\.0\.0\.1 port \d+: not in --allow/);
    expect(yes.code).toBe(0);
    expect(yes.stdout).toContain("receiver");
    expect(allowed.stderr()).not.toContain("refused");
  }, 30_000);

  test("streams, duration and requested rate are refused with the stock words; a running test goes on", async () => {
    const s = await server(21003, ["--max-streams", "2", "--max-duration", "4", "--max-rate", "500M"]);
    const running = stock(["-c", "127.0.0.1", "-p", "21003", "-t", "3", "-P", "2", "-b", "100M"]);
    await Bun.sleep(700);
    const [streams, duration, rate] = await Promise.all([
      stock(["-c", "127.0.0.1", "-p", "21003", "-t", "1", "-P", "4"]).done,
      stock(["-c", "127.0.0.1", "-p", "21003", "-t", "10"]).done,
      stock(["-c", "127.0.0.1", "-p", "21003", "-t", "1", "-b", "1G"]).done,
    ]);
    expect(streams.code).not.toBe(0);
    expect(streams.stderr + streams.stdout).toContain("iperf3: error - number of parallel streams too large");
    expect(duration.stderr + duration.stdout).toContain("iperf3: error - test duration too long");
    expect(rate.stderr + rate.stdout).toContain("iperf3: error - total required bandwidth is larger than server limit");
    const log = s.stderr();
    expect(log).toContain("test asks for 4 streams; this server allows 2 (--max-streams)");
    expect(log).toContain("test asks for 10 s; this server allows 4 s (--max-duration)");
    expect(log).toContain("test asks for 1 Gbit/s; this server allows 500 Mbit/s (--max-rate)");
    const r = await running.done;
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/\[SUM\].*receiver/);
  }, 30_000);

  test("--max-tests: one test too many gets 'server is busy'; the running one completes", async () => {
    const s = await server(21004, ["--max-tests", "1"]);
    const running = stock(["-c", "127.0.0.1", "-p", "21004", "-t", "2", "-b", "50M"]);
    await Bun.sleep(700);
    const busy = await stock(["-c", "127.0.0.1", "-p", "21004", "-t", "1"]).done;
    expect(busy.code).not.toBe(0);
    expect(busy.stderr + busy.stdout).toContain("the server is busy running a test");
    expect(s.stderr()).toContain("1 tests running; this server allows 1 at once (--max-tests)");
    expect((await running.done).code).toBe(0);
  }, 30_000);

  test("native --server-bitrate-limit: an unlimited test measured above it is ended", async () => {
    const s = await server(21005, ["--server-bitrate-limit", "50M/1"]);
    const fast = await stock(["-c", "127.0.0.1", "-p", "21005", "-t", "6"]).done;
    expect(fast.code).not.toBe(0);
    expect(fast.stderr + fast.stdout).toContain("total required bandwidth is larger than server limit");
    expect(s.stderr()).toMatch(/test ran at [\d.]+ [GM]bit\/s over [\d.]+ s; this server allows 50 Mbit\/s \(--server-bitrate-limit\)/);
  }, 30_000);

  test("the options are refused on a client", async () => {
    const c = await anyperf("iperf3", ["-c", "127.0.0.1", "-p", "21006", "--max-streams", "2"]).done;
    expect(c.code).toBe(2);
    expect(c.stderr).toContain("--max-streams is a server option");
  });
});
