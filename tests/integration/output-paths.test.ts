/**
 * Issue 21 item 1: every output file of every mode is checked before the test runs. A path in a missing directory,
 * a directory, or a place no file can be created fails at once in one line naming the user's flag and the fix, with
 * no stack, no minified source and no test run first (the peers named here are never started: a check that ran the
 * test would print its banner or fail on the closed port instead). Ports 33000-33099.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePorts, spawnProc, waitBound } from "../support/processes.ts";

const MAIN = join(import.meta.dir, "..", "..", "main.ts");
// A port nothing listens on, with the one below it (ntttcp -r's sync port) free too; picked at run time, as the range
// is also the kernel's ephemeral one.
const CLOSED = freePorts(33000, 33050, 2) + 1;
const dir = mkdtempSync(join(tmpdir(), "anyperf-outputs-"));
const missing = join(dir, "missing", "sub");

const cases: { name: string; argv: string[]; flag: string; path: string }[] = [
  { name: "loopback --csv", argv: ["loopback", "-t", "2", "-P", "1", "--csv", join(missing, "x.csv")], flag: "--csv", path: join(missing, "x.csv") },
  { name: "iperf3 -I", argv: ["iperf3", "-c", "127.0.0.1", "-p", `${CLOSED}`, "-I", join(missing, "pid")], flag: "--pidfile", path: join(missing, "pid") },
  { name: "iperf3 --logfile", argv: ["iperf3", "-c", "127.0.0.1", "-p", `${CLOSED}`, "--logfile", join(missing, "log")], flag: "--logfile", path: join(missing, "log") },
  { name: "iperf3 -s -I", argv: ["iperf3", "-s", "-p", `${CLOSED}`, "-1", "-I", join(missing, "pid")], flag: "--pidfile", path: join(missing, "pid") },
  { name: "iperf -o", argv: ["iperf", "-c", "127.0.0.1", "-p", `${CLOSED}`, "-t", "1", "-o", join(missing, "o.txt")], flag: "-o", path: join(missing, "o.txt") },
  { name: "ntttcp -j", argv: ["ntttcp", "-s127.0.0.1", "-p", `${CLOSED}`, "-t", "2", "-j", join(missing, "s.json")], flag: "-j", path: join(missing, "s.json") },
  { name: "ntttcp -x", argv: ["ntttcp", "-s127.0.0.1", "-p", `${CLOSED}`, "-t", "2", "-x", join(missing, "s.xml")], flag: "-x", path: join(missing, "s.xml") },
  { name: "ntttcp -O", argv: ["ntttcp", "-s127.0.0.1", "-p", `${CLOSED}`, "-t", "2", "-O", join(missing, "s.log")], flag: "-O", path: join(missing, "s.log") },
  { name: "ntttcp -r -x", argv: ["ntttcp", "-r127.0.0.1", "-p", `${CLOSED}`, "-t", "2", "-x", join(missing, "r.xml")], flag: "-x", path: join(missing, "r.xml") },
  { name: "Windows ntttcp -xml", argv: ["ntttcp", "--windows", "-s", "-m", "1,*,127.0.0.1", "-p", `${CLOSED}`, "-t", "2", "-xml", join(missing, "w.xml")], flag: "-xml", path: join(missing, "w.xml") },
];

function expectOneLine(stderr: string, stdout: string, flag: string, path: string, cause: RegExp): void {
  const lines = stderr.trim().split("\n");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toContain(`${flag} ${path}`);
  expect(lines[0]).toMatch(cause);
  expect(stderr + stdout).not.toMatch(/Bun v|\n\s+at |error: |ENOENT: no such file|\.tmp/);
}

describe("an output path that cannot be written fails before the test, in one line", () => {
  for (const c of cases) {
    test(`${c.name} in a missing directory`, async () => {
      const started = performance.now();
      const f = await spawnProc([process.execPath, MAIN, ...c.argv], 20_000).done;
      expect(f.code).toBe(1);
      expectOneLine(f.stderr, f.stdout, c.flag, c.path, /does not exist; create it first \(mkdir -p .*\) or pass a path in an existing directory/);
      // No test ran: loopback -t 2 alone would take over 2 s; the clients never got to their (closed) peer.
      expect(performance.now() - started).toBeLessThan(2_000 + 1_500);
      expect(f.stdout + f.stderr).not.toMatch(/refused|sync port|Connecting to host|connect failed/i);
    }, 30_000);
  }

  test("a directory given as the file, and a place where no file can be created", async () => {
    const a = await spawnProc([process.execPath, MAIN, "loopback", "-t", "2", "-P", "1", "--csv", dir], 20_000).done;
    expect(a.code).toBe(1);
    expectOneLine(a.stderr, a.stdout, "--csv", dir, /is a directory; pass a file name inside it/);
    const b = await spawnProc([process.execPath, MAIN, "ntttcp", "-s127.0.0.1", "-p", `${CLOSED}`, "-t", "2", "-j", "/proc/anyperf.json"], 20_000).done;
    expect(b.code).toBe(1);
    expectOneLine(b.stderr, b.stdout, "-j", "/proc/anyperf.json", /cannot create a file in \/proc/);
  }, 30_000);
});

test("a results file whose directory vanished during the test: the console report stays, then one line naming -j", async () => {
  const gone = mkdtempSync(join(tmpdir(), "anyperf-vanishing-"));
  // Inside the kernel's ephemeral range: take a pair no connection holds right now (sync port base − 1, data base).
  const sync = freePorts(33050, 33100, 2);
  const base = `${sync + 1}`;
  const receiver = spawnProc([process.execPath, MAIN, "ntttcp", "-r127.0.0.1", "-p", base, "-t", "1", "-P", "1", "-j", join(gone, "r.json")], 30_000);
  await waitBound(sync, "tcp", 15_000).catch((e: Error) => {
    throw new Error(`${e.message}\n--- receiver stderr ---\n${receiver.stderr()}`);
  });
  rmSync(gone, { recursive: true });
  const sender = await spawnProc([process.execPath, MAIN, "ntttcp", "-s127.0.0.1", "-p", base, "-t", "1", "-P", "1"], 30_000).done;
  expect(sender.code).toBe(0);
  const f = await receiver.done;
  expect(f.code).toBe(1);
  expect(f.stdout).toMatch(/INFO: \t throughput\t:[\d.]+[KMG]bps/);
  expect(f.stderr.trim().split("\n")).toEqual([`anyperf: -j ${join(gone, "r.json")}: cannot write it (ENOENT); free space or pass another path`]);
}, 40_000);
