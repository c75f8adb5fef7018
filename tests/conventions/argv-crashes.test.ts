/**
 * Issue 21 item 15: the command lines a trial of random argument vectors crashed on, each now one line naming the
 * flag (or the busy port), a non-zero exit and no stack, ZodError or "Bun v" banner. tests/fuzz/argv.test.ts keeps
 * looking for more; these are the named ones, run on loopback (ports 36600-36619; those that need a port free or
 * busy on purpose in a network namespace of their own).
 */
import { describe, expect, test } from "bun:test";

const MAIN = new URL("../../main.ts", import.meta.url).pathname;
const netns = process.platform === "linux" && Bun.spawnSync(["unshare", "-n", "true"]).exitCode === 0;
const CRASH = /ZodError|Bun v\d|^\s+at .+:\d+|internal error|Too (big|small): expected|"path"/m;

async function run(args: string[], ms = 20_000): Promise<{ code: number; out: string; err: string }> {
  const p = Bun.spawn([process.execPath, MAIN, ...args], { stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  const timer = setTimeout(() => p.kill("SIGKILL"), ms);
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  clearTimeout(timer);
  return { code, out, err };
}

function expectOneLine(r: { code: number; out: string; err: string }, text: string, code?: number): void {
  expect(`${r.err}${r.out}`).not.toMatch(CRASH);
  expect(r.err).toContain(text);
  if (code !== undefined) expect(r.code).toBe(code);
  else expect(r.code).not.toBe(0);
}

describe("global server limits out of range, in every mode", () => {
  const modes = [["iperf3", "-s"], ["iperf", "-s"], ["netserver", "-D"], ["ntttcp", "-r127.0.0.1"], ["loopback"]];
  test.each(modes)("%s", async (...mode) => {
    for (const [flag, value, limit] of [
      ["--max-tests", "65536", "at most 65535"],
      ["--max-streams", "99999999", "at most 65535"],
      ["--max-duration", "31536001", "at most 31536000"],
    ] as const) {
      const r = await run([...mode, flag, value]);
      expectOneLine(r, `anyperf: ${flag} ${value}: must be ${limit}; see --help\n`, 2);
    }
  });
});

describe("dialect values the plan's schema refused", () => {
  test('iperf3 -c "" fails as stock does: the name does not resolve', async () => {
    expectOneLine(await run(["iperf3", "-c", "", "-p", "36600"]), "unable to connect to server: Name or service not known", 1);
  });
  test("ntttcp -r -b 1G: the buffer is refused by its flag (ntttcp-for-linux's bad-argument status 255)", async () => {
    expectOneLine(await run(["ntttcp", "-r", "127.0.0.1", "-b", "1G", "-p", "36601", "-t", "1"]), "(-b) 1073741824 is above 67108864 bytes: pass -b 64M or less", 255);
  });
  test("ntttcp --windows -l 100M: refused by -l (NTttcp reads K and M only)", async () => {
    expectOneLine(await run(["ntttcp", "--windows", "-r", "-m", "1,*,127.0.0.1", "-l", "100M", "-p", "36602", "-t", "1"]), "-l 104857600 is above 67108864 bytes");
  });
  test("netperf -p with no number in it names -p and its range (was a schema dump)", async () => {
    expectOneLine(await run(["netperf", "-p", "\u00e9\u4e2d"]), "netperf: -p port \u00e9\u4e2d is outside 1..65535", 1);
  });
  test("netperf -Y above the TOS byte names -Y (was a schema dump of the request)", async () => {
    expectOneLine(await run(["netperf", "-H", "127.0.0.1", "-p", "36607", "-Y", "4294967296"]), "netperf: -Y 4294967296: an IP QoS value is 0..255", 1);
  });
  test.each([
    [["--fq-rate-limit", "-5"], "--fq-rate-limit -5: must be at least 0; see 'ntttcp -h'"],
    [["-B", "9".repeat(400)], "-B Infinity: must be a number; see 'ntttcp -h'"],
  ])("ntttcp %p: a value only the schema bounds names its flag (exit 255)", async (args, message) => {
    expectOneLine(await run(["ntttcp", "-r127.0.0.1", "-p", "36608", ...args]), message, 255);
  });
  test("iperf -u -l above a datagram names -l (was the engine's schema dump)", async () => {
    expectOneLine(await run(["iperf", "-c", "127.0.0.1", "-u", "-p", "36609", "--len=31536001"]), "anyperf: -l 31536001: a UDP datagram holds at most 65507 bytes", 1);
  });
  test("iperf -t 2147483648 names -t and its range", async () => {
    expectOneLine(await run(["iperf", "-c", "127.0.0.1", "-p", "36603", "-t", "2147483648"]), "anyperf: -t 2147483648: must be at most", 1);
  });
});

test.each(["iperf3 -s -p 36604 -I", "loopback -t 1 --csv"])("%s <300 characters>: an output path the filesystem will not look up (ENAMETOOLONG) is one line", async (cmd) => {
  const r = await run([...cmd.split(" "), "9".repeat(300)]);
  expectOneLine(r, "cannot be used (ENAMETOOLONG); pass another path");
});

/**
 * Runs a bash script in a network namespace of its own with loopback up: on the shared host a port of this range
 * can be another process's ephemeral port (or sit in TIME_WAIT), which would fail these tests for a reason not theirs.
 */
async function inNetns(script: string): Promise<{ code: number; out: string; err: string }> {
  const p = Bun.spawn(["unshare", "-n", "bash", "-c", `ip link set lo up && ${script}`], { stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  const timer = setTimeout(() => p.kill("SIGKILL"), 40_000);
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  clearTimeout(timer);
  return { code, out, err };
}

const anyperf = (...args: string[]) => [process.execPath, MAIN, ...args].join(" ");

describe.skipIf(!netns)("runtime faults", () => {
  test("netperf -- -H localhost resolves the name, as stock netperf does", async () => {
    const netperf = (opt: string) => anyperf("netperf", "-H", "127.0.0.1", "-p", "36605", "-l", "1", "--", opt);
    const r = await inNetns(
      `{ ${anyperf("netserver", "-D", "-p", "36605")} & } && sleep 1 && ${netperf("-H localhost")} && ${netperf("-L localhost,4")}; rc=$?; kill %1; exit $rc`,
    );
    expect(`${r.err}${r.out}`).not.toMatch(CRASH);
    expect(r.out.match(/\n\s*\d+\s+\d+\s+\d+\s+1\.\d+\s+\d+\.\d+/g)).toHaveLength(2);
    expect(r.code).toBe(0);
  }, 60_000);

  test.each([
    ["-- -m 1G", "netperf: -- -m 1073741824 is above 67108864 bytes, anyperf's largest read or write"],
    ["-t UDP_STREAM -- -m 1G", "netperf: -- -m 1073741824 is above 65507 bytes, the largest UDP datagram"],
  ])("netperf %s: refused before the test, not a schema dump from the data socket", async (opts, message) => {
    const r = await inNetns(`{ ${anyperf("netserver", "-D", "-p", "36606")} & } && sleep 1 && ${anyperf("netperf", "-H", "127.0.0.1", "-p", "36606", "-l", "1", ...opts.split(" "))}; rc=$?; kill %1; exit $rc`);
    expectOneLine(r, message);
  }, 60_000);

  test.each([
    ["127.0.0.1", "-r127.0.0.1", 36610],
    ["::1", "-r::1", 36615],
  ])("ntttcp receiver on %s with its sync port (base − 1) busy: a clean message naming that port", async (host, role, port) => {
    const busy = `require("node:net").createServer().listen(${port - 1}, "${host}", () => console.log("busy"))`;
    const ntttcp = anyperf("ntttcp", ...(host === "::1" ? ["-6"] : []), role, "-p", String(port), "-P", "1", "-t", "2");
    const r = await inNetns(`{ ${process.execPath} -e '${busy}' & } && sleep 0.5 && ${ntttcp}; rc=$?; kill %1; exit $rc`);
    expect(r.out).toContain("busy");
    expectOneLine(r, `anyperf: port ${port - 1} in use on ${host}: pass another port (-p) or stop the other server`, 1);
  });
});
