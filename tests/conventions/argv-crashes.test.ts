/**
 * Issue 21 item 15: the command lines a trial of random argument vectors crashed on, each now one line naming the
 * flag (or the busy port), a non-zero exit and no stack, ZodError or "Bun v" banner. tests/fuzz/argv.test.ts keeps
 * looking for more; these are the named ones, run on loopback (ports 36600-36619; the busy-port ones in a network
 * namespace of their own).
 */
import { afterAll, describe, expect, test } from "bun:test";

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
  test("iperf -t 2147483648 names -t and its range", async () => {
    expectOneLine(await run(["iperf", "-c", "127.0.0.1", "-p", "36603", "-t", "2147483648"]), "anyperf: -t 2147483648: must be at most", 1);
  });
});

describe("runtime faults", () => {
  const spawned: ReturnType<typeof Bun.spawn>[] = [];
  afterAll(() => {
    for (const p of spawned) p.kill("SIGKILL");
  });

  test("netperf -- -H localhost resolves the name, as stock netperf does", async () => {
    const ns = Bun.spawn([process.execPath, MAIN, "netserver", "-D", "-p", "36605"], { stdout: "pipe", stderr: "pipe", stdin: "ignore" });
    spawned.push(ns);
    // netserver says it started before it takes connections.
    const reader = ns.stdout.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toContain("Starting netserver");
    for (const opt of [["-H", "localhost"], ["-L", "localhost,4"]]) {
      const r = await run(["netperf", "-H", "127.0.0.1", "-p", "36605", "-l", "1", "--", ...opt]);
      expect(`${r.err}${r.out}`).not.toMatch(CRASH);
      expect(r.out).toMatch(/10\^6bits\/sec[\s\S]*\n\s*\d+\s+\d+\s+\d+\s+1\.\d+\s+\d+\.\d+/);
      expect(r.code).toBe(0);
    }
  }, 60_000);

  // In a network namespace of its own: on the shared host a port of this range can sit in TIME_WAIT as another
  // test's ephemeral port, and the data port's own EADDRINUSE would hide the sync port's.
  test.skipIf(!netns).each([
    ["127.0.0.1", "-r127.0.0.1", 36610],
    ["::1", "-r::1", 36615],
  ])("ntttcp receiver on %s with its sync port (base − 1) busy: a clean message naming that port", async (host, role, port) => {
    const busy = `require("node:net").createServer().listen(${port - 1}, "${host}", () => console.log("busy"))`;
    const ntttcp = [process.execPath, MAIN, "ntttcp", ...(host === "::1" ? ["-6"] : []), role, "-p", String(port), "-P", "1", "-t", "2"];
    const script = `ip link set lo up && { ${process.execPath} -e '${busy}' & } && sleep 0.5 && ${ntttcp.join(" ")}; rc=$?; kill %1; exit $rc`;
    const p = Bun.spawn(["unshare", "-n", "bash", "-c", script], { stdout: "pipe", stderr: "pipe", stdin: "ignore" });
    const timer = setTimeout(() => p.kill("SIGKILL"), 20_000);
    const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
    clearTimeout(timer);
    expect(out).toContain("busy");
    expectOneLine({ out, err, code }, `anyperf: port ${port - 1} in use on ${host}: pass another port (-p) or stop the other server`, 1);
  });
});
