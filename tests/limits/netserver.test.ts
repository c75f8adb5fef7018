/**
 * `anyperf netserver` with --allow and the --max-* limits against the stock netperf 2.7.0 client: refusals reach
 * netperf as the errors it prints ("remote error 22", "remote error 16"), our server logs the limit and its flag,
 * and a test already running completes.
 */
import { describe, expect, test } from "bun:test";
import { hasTool, type Proc, serversPerTest, spawnProc } from "./harness.ts";

const HAVE = hasTool(["netperf", "-V"], /Netperf version 2\./);
const netperf = (args: string[], ms = 20_000) => spawnProc(["netperf", ...args], ms);
const start = serversPerTest();
const server = (port: number, args: string[]): Promise<Proc> => start("netserver", ["-D", "-p", String(port), ...args], port);

const both = (f: { stdout: string; stderr: string }) => f.stdout + f.stderr;

describe.skipIf(!HAVE)("netserver limits with the stock netperf", () => {
  test("--allow: outside the list closed at accept and logged; inside served", async () => {
    const denied = await server(21201, ["--allow", "10.0.0.0/8"]);
    const allowed = await server(21202, ["--allow", "127.0.0.0/8,::1"]);
    const [no, yes] = await Promise.all([netperf(["-H", "127.0.0.1", "-p", "21201", "-l", "1"]).done, netperf(["-H", "127.0.0.1", "-p", "21202", "-l", "1"]).done]);
    expect(no.code).not.toBe(0);
    expect(both(no)).not.toContain("10^6bits/sec");
    expect(denied.stderr()).toMatch(/netserver: refused 127\.0\.0\.1 port \d+: not in --allow/);
    expect(yes.code).toBe(0);
    expect(yes.stdout).toContain("10^6bits/sec");
  }, 30_000);

  test("--max-duration refuses a longer -l (remote error 22) and ends a count test at the limit", async () => {
    const s = await server(21203, ["--max-duration", "2"]);
    const [long, ok] = await Promise.all([netperf(["-H", "127.0.0.1", "-p", "21203", "-l", "5"]).done, netperf(["-H", "127.0.0.1", "-p", "21203", "-l", "1"]).done]);
    expect(long.code).not.toBe(0);
    expect(both(long)).toContain("netperf: remote error 22");
    expect(ok.code).toBe(0);
    expect(s.stderr()).toMatch(/refused test from 127\.0\.0\.1 port \d+: test asks for 5 s; this server allows 2 s \(--max-duration\)/);
    // -l -N: a count of transactions loopback needs most of a minute for; the server ends it at 2 s.
    const t0 = Date.now();
    const counted = await netperf(["-H", "127.0.0.1", "-p", "21203", "-t", "TCP_RR", "-l", "-2000000"], 20_000).done;
    expect(Date.now() - t0).toBeLessThan(8_000);
    expect(counted.stdout).toMatch(/\s2\.0\d\s+\d+\.\d+\s*$/m);
    expect(s.stderr()).toMatch(/ended test from 127\.0\.0\.1 port \d+ after 2 s: this server allows 2 s \(--max-duration\)/);
  }, 30_000);

  test("--max-tests: one too many gets EBUSY (remote error 16); the running test completes", async () => {
    const s = await server(21204, ["--max-tests", "1"]);
    const running = netperf(["-H", "127.0.0.1", "-p", "21204", "-l", "2"]);
    await Bun.sleep(700);
    const busy = await netperf(["-H", "127.0.0.1", "-p", "21204", "-l", "1"]).done;
    expect(both(busy)).toContain("netperf: remote error 16");
    expect(s.stderr()).toContain("1 tests running; this server allows 1 at once (--max-tests)");
    const r = await running.done;
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/\s2\.0\d\s+\d+\.\d+\s*$/m);
  }, 30_000);
});
