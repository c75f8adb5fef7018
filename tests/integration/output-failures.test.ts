/**
 * Issue 29 item 1: the run's output failing ends every mode cleanly, through the built binary. stdout on /dev/full
 * (ENOSPC) or opened read-only (EBADF): one line on stderr naming the stream and the cause, exit 1. stdout into a pipe
 * whose reader left (EPIPE): quiet, exit 141 as a tool killed by SIGPIPE, the run's files still written. Each output
 * file (--history, --csv, -o, --logfile, -I, -x, -j, -O, report -o) on /dev/full: one line naming its flag, exit 1.
 * Every native mode, each dialect's client and server, and serve. Ports 33100-33499 (freePorts at run time).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePorts, spawnProc, waitBound, type Finished, type Proc } from "../support/processes.ts";

const ROOT = join(import.meta.dir, "..", "..");
const BIN = join(ROOT, "dist", "anyperf");
const dir = mkdtempSync(join(tmpdir(), "anyperf-output-failures-"));

/** Serve's ports, taken free at run time; ntttcp's sync port sits below its base, its Windows token ports 1000 above. */
function pickPorts() {
  return {
    native: freePorts(33100, 33500, 1),
    iperf3: freePorts(33100, 33500, 1),
    iperf: freePorts(33100, 33500, 1),
    netserver: freePorts(33100, 33500, 1),
    ntttcp: freePorts(33100, 33500, 17, [1000]) + 1,
  };
}
let ports = pickPorts();
let serve: Proc | undefined;

beforeAll(async () => {
  // The binary under test is the tree's own: build it (scripts/build, about 15 s).
  const b = Bun.spawnSync([join(ROOT, "scripts", "build")], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  if (b.exitCode !== 0) throw new Error(`scripts/build failed:\n${b.stderr.toString()}`);
  // A port another process took between the pick and serve's bind ends serve at once: pick again, once.
  for (let attempt = 1; ; attempt++) {
    serve = spawnProc(
      [BIN, "serve", "-B", "127.0.0.1", "-p", `${ports.native}`, "--iperf3", `${ports.iperf3}`, "--iperf", `${ports.iperf}`, "--netserver", `${ports.netserver}`, "--ntttcp", `${ports.ntttcp}`],
      600_000,
    );
    const exited = serve.done.then((f) => f);
    try {
      for (const p of [ports.native, ports.iperf3, ports.iperf, ports.netserver, ports.ntttcp]) {
        await Promise.race([waitBound(p, "tcp", 20_000), exited.then((f) => Promise.reject(new Error(`serve exited ${f.code}: ${f.stderr}`)))]);
      }
      return;
    } catch (e) {
      serve.kill("SIGKILL");
      const f = await serve.done;
      if (attempt === 2) throw new Error(`serve never listened on ${JSON.stringify(ports)}: ${(e as Error).message}\nstdout: ${f.stdout}\nstderr: ${f.stderr}`);
      ports = pickPorts();
    }
  }
}, 180_000);

afterAll(async () => {
  serve?.kill("SIGTERM");
  await serve?.done;
  rmSync(dir, { recursive: true, force: true });
}, 30_000);

type Sink = "full" | "read-only" | "closed pipe";

/** Runs the binary with stdout on `sink`; stderr is collected. */
async function run(argv: string[], sink: Sink, limitMs = 30_000): Promise<Finished> {
  if (sink === "closed pipe") {
    // The reader exits at once, before anything is written: the first write meets EPIPE.
    return spawnProc(["bash", "-c", '"$@" | head -c 0; exit "${PIPESTATUS[0]}"', "_", BIN, ...argv], limitMs).done;
  }
  const fd = openSync(sink === "full" ? "/dev/full" : "/dev/null", sink === "full" ? "w" : "r");
  try {
    const p = Bun.spawn([BIN, ...argv], { stdout: fd, stderr: "pipe" });
    const timer = setTimeout(() => p.kill("SIGKILL"), limitMs);
    const [stderr, code] = await Promise.all([new Response(p.stderr).text(), p.exited]);
    clearTimeout(timer);
    return { code, stdout: "", stderr };
  } finally {
    closeSync(fd);
  }
}

const CRASH = /\n\s+at |Bun v\d|error: |please report|Unhandled|uncaught/i;

/**
 * Every mode that prints to stdout: a client runs against the serve above (its ports read when the test runs: serve
 * may have moved to others), a server on ports of its own.
 */
function modes(): { name: string; argv: string[] }[] {
  const [i3, i2, ns, nt, nw, sv] = [1, 1, 1, 17, 2, 1].map((n) => freePorts(33100, 33500, n)) as [number, number, number, number, number, number];
  return [
    { name: "loopback", argv: ["loopback", "-t", "1", "-P", "1"] },
    { name: "loopback --json", argv: ["loopback", "-t", "1", "-P", "1", "--json"] },
    { name: "client", get argv() { return ["client", "127.0.0.1", "-p", `${ports.native}`, "-t", "1"]; } },
    { name: "client --json", get argv() { return ["client", "127.0.0.1", "-p", `${ports.native}`, "-t", "1", "--json"]; } },
    { name: "iperf3 -c", get argv() { return ["iperf3", "-c", "127.0.0.1", "-p", `${ports.iperf3}`, "-t", "1"]; } },
    { name: "iperf3 -c -J", get argv() { return ["iperf3", "-c", "127.0.0.1", "-p", `${ports.iperf3}`, "-t", "1", "-J"]; } },
    { name: "iperf -c", get argv() { return ["iperf", "-c", "127.0.0.1", "-p", `${ports.iperf}`, "-t", "1"]; } },
    { name: "netperf", get argv() { return ["netperf", "-H", "127.0.0.1", "-p", `${ports.netserver}`, "-l", "1"]; } },
    { name: "ntttcp -s", get argv() { return ["ntttcp", "-s127.0.0.1", "-p", `${ports.ntttcp}`, "-t", "1", "-P", "1"]; } },
    { name: "serve", argv: ["serve", "-B", "127.0.0.1", "-p", `${sv}`, "--iperf3", "off", "--iperf", "off", "--netserver", "off", "--ntttcp", "off"] },
    { name: "iperf3 -s", argv: ["iperf3", "-s", "-B", "127.0.0.1", "-p", `${i3}`] },
    { name: "iperf -s", argv: ["iperf", "-s", "-B", "127.0.0.1", "-p", `${i2}`] },
    { name: "netserver", argv: ["netserver", "-D", "-L", "127.0.0.1", "-p", `${ns}`] },
    { name: "ntttcp -r", argv: ["ntttcp", "-r127.0.0.1", "-p", `${nt + 1}`, "-t", "1", "-P", "1"] },
    { name: "Windows ntttcp -r", argv: ["ntttcp", "--windows", "-r", "-m", "1,*,127.0.0.1", "-p", `${nw}`, "-t", "1"] },
  ];
}

describe("stdout that cannot be written ends every mode cleanly", () => {
  for (const m of modes()) {
    test(`${m.name}: /dev/full is one line naming stdout and ENOSPC, exit 1`, async () => {
      const f = await run(m.argv, "full");
      expect(f.stderr.trim().split("\n")).toEqual(["anyperf: cannot write to stdout: no space left on device (ENOSPC); the run was stopped: redirect it elsewhere"]);
      expect(f.code).toBe(1);
    }, 60_000);
    test(`${m.name}: a pipe whose reader left stops quietly, exit 141`, async () => {
      const f = await run(m.argv, "closed pipe");
      expect(f.stderr).toBe("");
      expect(f.code).toBe(141);
    }, 60_000);
  }

  test("stdout opened read-only (EBADF) is one line naming stdout", async () => {
    const f = await run(["loopback", "-t", "1", "-P", "1"], "read-only");
    expect(f.stderr.trim().split("\n")).toEqual(["anyperf: cannot write to stdout: not open for writing (EBADF); the run was stopped: redirect it elsewhere"]);
    expect(f.code).toBe(1);
  }, 60_000);

  test("EPIPE still writes the run's files: --history has the run, --csv its rows", async () => {
    const history = join(dir, "h.jsonl");
    const csv = join(dir, "i.csv");
    const f = await run(["loopback", "-t", "1", "-P", "1", "-i", "0.5", "--history", history, "--csv", csv], "closed pipe");
    expect(f.stderr).toBe("");
    expect(f.code).toBe(141);
    const entries = readFileSync(history, "utf8").trim().split("\n");
    expect(entries).toHaveLength(1);
    expect(JSON.parse(entries[0]!).mode).toBe("loopback");
    expect(readFileSync(csv, "utf8").split("\n")[0]).toMatch(/^\w/);
  }, 60_000);
});

describe("an output file that cannot be written is one line naming its flag, exit 1", () => {
  const cases: { name: string; argv: () => string[]; line: string }[] = [
    { name: "loopback --history", argv: () => ["loopback", "-t", "1", "-P", "1", "--history", "/dev/full"], line: "anyperf: cannot write --history /dev/full: no space left on device (ENOSPC); the run was stopped: free space or pass another path" },
    { name: "loopback --csv", argv: () => ["loopback", "-t", "1", "-P", "1", "--csv", "/dev/full"], line: "anyperf: cannot write --csv /dev/full: no space left on device (ENOSPC); the run was stopped: free space or pass another path" },
    { name: "iperf -o", argv: () => ["iperf", "-c", "127.0.0.1", "-p", `${ports.iperf}`, "-t", "1", "-o", "/dev/full"], line: "anyperf: cannot write -o /dev/full: no space left on device (ENOSPC); the run was stopped: free space or pass another path" },
    { name: "iperf3 --logfile", argv: () => ["iperf3", "-c", "127.0.0.1", "-p", `${ports.iperf3}`, "-t", "1", "--logfile", "/dev/full"], line: "anyperf: cannot write --logfile /dev/full: no space left on device (ENOSPC); the run was stopped: free space or pass another path" },
    { name: "iperf3 -I", argv: () => ["iperf3", "-c", "127.0.0.1", "-p", `${ports.iperf3}`, "-t", "1", "-I", "/dev/full"], line: "iperf3: error - unable to write PID file: --pidfile /dev/full: cannot write it (ENOSPC); free space or pass another path" },
    { name: "ntttcp -O", argv: () => ["ntttcp", "-s127.0.0.1", "-p", `${ports.ntttcp}`, "-t", "1", "-P", "1", "-O", "/dev/full"], line: "anyperf: cannot write -O /dev/full: no space left on device (ENOSPC); the run was stopped: free space or pass another path" },
    { name: "ntttcp -x", argv: () => ["ntttcp", "-s127.0.0.1", "-p", `${ports.ntttcp}`, "-t", "1", "-P", "1", "-x", "/dev/full"], line: "anyperf: -x /dev/full: cannot write it (ENOSPC); free space or pass another path" },
    { name: "ntttcp -j", argv: () => ["ntttcp", "-s127.0.0.1", "-p", `${ports.ntttcp}`, "-t", "1", "-P", "1", "-j", "/dev/full"], line: "anyperf: -j /dev/full: cannot write it (ENOSPC); free space or pass another path" },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const f = await spawnProc([BIN, ...c.argv()], 30_000).done;
      expect(f.stderr.trim().split("\n")).toEqual([c.line]);
      expect(f.stdout + f.stderr).not.toMatch(CRASH);
      expect(f.code).toBe(1);
    }, 60_000);
  }

  test("report -o", async () => {
    const history = join(dir, "report.jsonl");
    expect((await spawnProc([BIN, "loopback", "-t", "1", "-P", "1", "--history", history], 30_000).done).code).toBe(0);
    const f = await spawnProc([BIN, "report", "--history", history, "-o", "/dev/full"], 30_000).done;
    expect(f.stderr.trim().split("\n")).toEqual(["anyperf: -o /dev/full: cannot write it (ENOSPC); free space or pass another path"]);
    expect(f.code).toBe(1);
  }, 60_000);

  test("--csv /dev/stdout into a pipe whose reader left: quiet, exit 141", async () => {
    const f = await run(["loopback", "-t", "1", "-P", "1", "--csv", "/dev/stdout"], "closed pipe");
    expect(f.stderr).toBe("");
    expect(f.code).toBe(141);
  }, 60_000);
});
