/**
 * Issue 21 item 12: --help in every mode, errors that name the user's flag (never a schema field), negative numbers
 * reach the range check, and an ntttcp command without a role says it listens on every address.
 * Runs main.ts from source: no binary needed, nothing is sent on the network.
 */
import { describe, expect, test } from "bun:test";
import { parseCommand } from "../../compat/ntttcp/parse.ts";

const MAIN = new URL("../../main.ts", import.meta.url).pathname;

async function run(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const p = Bun.spawn([process.execPath, MAIN, ...args], { stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  const timer = setTimeout(() => p.kill("SIGKILL"), 20_000);
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  clearTimeout(timer);
  return { code, out, err };
}

/** Schema field names that leaked into messages before (and their likes): a user never typed them. */
const INTERNAL = /durationS|bufferBytes|datagramBytes|intervalS|warmupS|streams:|ZodError|maxTests|maxStreams|maxDurationS|"path"/;

describe("--help in every mode", () => {
  // Each peer's own usage and exit status: netperf and netserver print the usage on stderr and exit 1 (as for -h),
  // ntttcp-for-linux exits 23 after its usage, iperf 2 writes it on stderr and exits 1, iperf3 exits 0.
  test.each([
    ["netperf", "err", "Usage: netperf [global options] -- [test options]", 1],
    ["netserver", "err", "Usage: netserver [options]", 1],
    ["ntttcp", "out", "usage: anyperf ntttcp", 23],
    ["iperf3", "out", "Usage: anyperf iperf3", 0],
    ["iperf", "err", "Usage: anyperf iperf [-s|-c host] [options]", 1],
    ["loopback", "out", "usage: anyperf loopback", 0],
  ] as const)("anyperf %s --help", async (mode, stream, text, code) => {
    const r = await run(mode, "--help");
    expect(r[stream]).toContain(text);
    expect(r.err).not.toContain("invalid option");
    expect(r.err).not.toContain("unrecognized option");
    expect(r.code).toBe(code);
  });

  test("netperf -- --help prints the test-specific usage, as -- -h does", async () => {
    const [help, h] = await Promise.all([run("netperf", "--", "--help"), run("netperf", "--", "-h")]);
    expect(help.err).toBe(h.err);
    expect(help.code).toBe(h.code);
  });
});

describe("errors name the user's flag", () => {
  test.each([
    [["loopback", "-t", "-5"], "--time -5: must be above 0"],
    [["loopback", "--time", "-5"], "--time -5: must be above 0"],
    [["loopback", "-t", "0"], "--time 0: must be above 0"],
    [["loopback", "-l", "0"], "--length 0: must be at least 1"],
    [["loopback", "-u", "-l", "70000"], "--length 70000: must be at most 65507"],
    [["loopback", "-P", "20000"], "--parallel 20000: must be at most 10000"],
    [["loopback", "-i", "0.01"], "--interval 0.01: must be at least 0.1"],
    [["loopback", "--warmup", "-1"], "--warmup -1: must be at least 0"],
    [["loopback", "--rr", "0,1"], "--rr 0,1: must be at least 1"],
    [["loopback", "--workers", "0"], "--workers 0: must be at least 1"],
  ])("%p", async (args, message) => {
    const r = await run(...args);
    expect(r.err).toBe(`anyperf: ${message}; see --help\n`);
    expect(r.err).not.toMatch(INTERNAL);
    expect(r.code).toBe(2);
  });
});

test.each([
  [["loopback", "-b", "-5"], 'anyperf: --rate "-5" is not a rate'],
  [["loopback", "-l", "abc"], 'anyperf: --length "abc" is not a size'],
  [["loopback", "--http", "abc"], 'anyperf: bad --http value "abc"'],
  [["loopback", "--http", "127.0.0.1:36720", "--linger", "x"], "anyperf: --linger x: must be seconds"],
])("usage errors of native modes exit 2 and name the flag: %p", async (args, start) => {
  const r = await run(...args);
  expect(r.err.startsWith(start)).toBe(true);
  expect(r.err.trim().split("\n")).toHaveLength(1);
  expect(r.code).toBe(2);
});

// iperf 2 reads its options with node:util parseArgs too: a negative value is the flag's, not "ambiguous".
test.each([
  [["iperf", "-c", "127.0.0.1", "-p", "36721", "-t", "-5"], 'anyperf: -t time "-5" is not a number of seconds'],
  [["iperf", "-c", "127.0.0.1", "-p", "36721", "-P", "-2"], "anyperf: -P -2: must be at least 1"],
])("iperf: %p", async (args, start) => {
  const r = await run(...args);
  expect(r.err.startsWith(start)).toBe(true);
  expect(r.err).not.toContain("ambiguous");
  expect(r.code).toBe(1);
});

describe("ntttcp without a role", () => {
  test("-V alone warns that a receiver starts on every address", () => {
    const cmd = parseCommand(["-V"], { cpus: 2 });
    if (cmd.kind !== "run") throw new Error("help");
    expect(cmd.plan.role).toBe("receiver");
    expect(cmd.notes.join("\n")).toContain("no role given (-r or -s): receiving on every address of this host (0.0.0.0)");
  });
  test("-6 alone names ::; a role or a bound address says nothing", () => {
    const v6 = parseCommand(["-6"], { cpus: 2 });
    expect(v6.kind === "run" && v6.notes.join("\n")).toContain("(::)");
    for (const argv of [["-r"], ["-r127.0.0.1"], ["-s127.0.0.1"], ["-m", "1,*,127.0.0.1"]]) {
      const cmd = parseCommand(argv, { cpus: 2 });
      expect(cmd.kind === "run" && cmd.notes.some((n) => n.includes("no role given"))).toBe(false);
    }
  });
});
