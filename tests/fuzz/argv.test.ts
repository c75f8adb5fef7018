/**
 * The argv fuzzer: random command lines for every mode (argv-dialects.ts) run as real processes, inside a network
 * namespace this test makes (only loopback exists there: a value read as a host reaches nothing else, and no port
 * can meet another test's). Dialect servers (iperf3 -s, iperf -s, netserver, ntttcp -r) listen in it too, so client
 * cases also reach a peer. Each case ends by itself or is stopped (SIGTERM, then SIGKILL) after its time: what the
 * program needs to start a mode on this machine now (measured first: a loaded host starts it several times slower),
 * plus CASE_MS.
 *
 * A case passes when its output holds no crash: no stack trace, no ZodError or raw zod message, no "Bun v" banner of
 * an uncaught error, no "please report" from main.ts's safety net. An error line with a non-zero exit is the right
 * answer to a bad command line. Failures are grouped by their first error line, each with one argv to replay.
 *
 *   default: the sweep, one case per flag of every mode with a seeded value (CI runs the same ones)
 *   FUZZ_ARGV_RUNS=N: N random command lines after it; scripts/fuzz --long (FUZZ_RUNS=100000): 3000
 *   FUZZ_SEED replays a run
 *   dist/anyperf runs the cases when it is newer than every source file, main.ts from source otherwise;
 *   FUZZ_ARGV_BIN=PATH picks a binary
 */
import { expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { caseArb, MODES, SERVER_PORTS, sweepCases, type ArgvCase } from "./argv-dialects.ts";
import { seedFor } from "./harness.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
/** Random command lines after the sweep (one case per flag): none by default, 3000 for scripts/fuzz --long. */
const RUNS = Number(process.env.FUZZ_ARGV_RUNS || (process.env.FUZZ_RUNS ? Math.min(Number(process.env.FUZZ_RUNS), 3000) : 0));
/** Long enough to get past start-up under load; long runs (FUZZ_RUNS set) let cases run further. */
/** Time a case runs past start-up; long runs (FUZZ_RUNS set) let cases go further. */
const CASE_MS = Number(process.env.FUZZ_ARGV_CASE_MS || (process.env.FUZZ_RUNS ? 1200 : 400));
/** The longest start-up the time limit allows for. */
const MAX_START_MS = 3000;
/** Most cases wait on a socket or a timer: more of them than cores run at once. */
const AT_ONCE = Number(process.env.FUZZ_ARGV_JOBS || 6);

/** The newest modification time of the program's sources: a binary older than this is not the code under test. */
function newestSource(dir: string): number {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.isDirectory() && e.name !== "node_modules" && e.name !== "testdata") newest = Math.max(newest, newestSource(path));
    else if (e.name.endsWith(".ts")) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/** The built binary when it is newer than every source (it starts twice as fast), else main.ts from source. */
function command(): string[] {
  if (process.env.FUZZ_ARGV_BIN) return [join(ROOT, process.env.FUZZ_ARGV_BIN)];
  const bin = join(ROOT, "dist/anyperf");
  const built = existsSync(bin) ? statSync(bin).mtimeMs : 0;
  const sources = Math.max(statSync(join(ROOT, "main.ts")).mtimeMs, ...["lib", "src", "compat", "interop"].map((d) => newestSource(join(ROOT, d))));
  return built > sources ? [bin] : [process.execPath, join(ROOT, "main.ts")];
}
const COMMAND = command();

/** What marks a crash in a case's output, and the name it is reported under. */
const CRASH: [RegExp, string][] = [
  [/ZodError/, "ZodError"],
  [/Too (big|small): expected|Invalid input: expected|expected (number|string|int) to be/, "raw zod message"],
  [/^\s+at .+:\d+(:\d+)?\)?\s*$/m, "stack trace"],
  [/\bBun v\d+\.\d+/, "uncaught error (Bun banner)"],
  [/please report/, "caught only by main.ts's safety net"],
  [/\b(Unhandled|uncaught)\b/i, "unhandled error"],
];

function crashOf(output: string): string | undefined {
  for (const [re, name] of CRASH) {
    if (!re.test(output)) continue;
    // Grouped by kind and the first error-looking line, numbers and ports blurred.
    const line = output.split("\n").find((l) => /error|Error|ERR|not an|Cannot|cannot/.test(l)) ?? "";
    return `${name}: ${line.trim().replace(/\d+/g, "N").slice(0, 160)}`;
  }
  return undefined;
}

/** Processes this test started, found by the marker in their environment: daemons detach and outlive the case. */
function pidsMarked(marker: string): number[] {
  const out: number[] = [];
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d) || Number(d) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${d}/environ`, "latin1").split("\0").includes(marker)) out.push(Number(d));
    } catch {
      // gone, or not ours to read
    }
  }
  return out;
}

function killMarked(marker: string): void {
  for (const pid of pidsMarked(marker)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
}

interface Outcome {
  c: ArgvCase;
  code: number | null;
  output: string;
  ms: number;
}

function canMakeNamespace(): boolean {
  const r = Bun.spawnSync(["unshare", "-n", "true"], { stdout: "ignore", stderr: "ignore" });
  return r.exitCode === 0;
}

const available = process.platform === "linux" && canMakeNamespace();

test.skipIf(!available)(
  "argv fuzzer: no mode crashes on any command line",
  async () => {
    const seed = seedFor("argv");
    const work = mkdtempSync(join(tmpdir(), "anyperf-argv-fuzz-"));
    const marker = `ANYPERF_ARGV_FUZZ=${work}`;
    // The namespace lives as long as this holder process; every case joins it.
    const holder = Bun.spawn(["unshare", "-n", "sleep", "3600"], { stdout: "ignore", stderr: "ignore", env: { ...process.env, ANYPERF_ARGV_FUZZ: work } });
    const enter = ["nsenter", "-t", String(holder.pid), "-n", "--"];
    const env = { ...process.env, ANYPERF_ARGV_FUZZ: work, ANYPERF_NTTTCP_TOKEN_OFFSET: "500", NO_COLOR: "1" };
    const servers: { name: string; proc: ReturnType<typeof Bun.spawn> }[] = [];
    const t0 = performance.now();
    try {
      await Bun.sleep(100);
      expect(Bun.spawnSync([...enter, "ip", "link", "set", "lo", "up"]).exitCode).toBe(0);
      const serverDir = join(work, "servers");
      mkdirSync(serverDir);
      for (const [name, argv] of [
        ["iperf3 -s", ["iperf3", "-s", "-p", String(SERVER_PORTS.iperf3)]],
        ["iperf -s", ["iperf", "-s", "-p", String(SERVER_PORTS.iperf)]],
        ["netserver", ["netserver", "-D", "-p", String(SERVER_PORTS.netserver)]],
        ["ntttcp -r", ["ntttcp", "-r127.0.0.1", "-H", "-p", String(SERVER_PORTS.ntttcp), "-P", "2", "-t", "1", "-Q"]],
      ] as const) {
        servers.push({ name, proc: Bun.spawn([...enter, ...COMMAND, ...argv], { cwd: serverDir, env, stdout: "pipe", stderr: "pipe", stdin: "ignore" }) });
      }

      // Start-up of a mode, as slow as it is now: the median of a few, each loading a dialect and the engine; capped,
      // so a moment of extreme load cannot stretch the run without bound.
      const starts = ["iperf3", "loopback", "ntttcp"].map((mode) => {
        const t = performance.now();
        Bun.spawnSync([...enter, ...COMMAND, mode, "--help"], { env, stdout: "ignore", stderr: "ignore" });
        return performance.now() - t;
      });
      const startMs = Math.min(starts.sort((a, b) => a - b)[1]!, MAX_START_MS);
      const limitMs = Math.round(startMs + CASE_MS);
      const perMode = Math.ceil(RUNS / MODES.length);
      const random = perMode === 0 ? [] : MODES.flatMap((m, k) => fc.sample(caseArb(m, k * perMode), { numRuns: perMode, seed: seed + k }));
      const cases: ArgvCase[] = [...sweepCases(seed), ...random];
      const outcomes: Outcome[] = [];
      let next = 0;
      const worker = async () => {
        while (next < cases.length) {
          const i = next++;
          const c = cases[i]!;
          const cwd = join(work, String(i));
          mkdirSync(cwd);
          const started = performance.now();
          const p = Bun.spawn([...enter, ...COMMAND, ...c.argv], { cwd, env: { ...env, ANYPERF_ARGV_CASE: cwd }, stdout: "pipe", stderr: "pipe", stdin: "ignore" });
          const term = setTimeout(() => p.kill("SIGTERM"), limitMs);
          const kill = setTimeout(() => p.kill("SIGKILL"), limitMs + 1000);
          const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
          clearTimeout(term);
          clearTimeout(kill);
          // A daemon the case started (iperf3 -D, netserver without -D) outlives it: it goes now.
          killMarked(`ANYPERF_ARGV_CASE=${cwd}`);
          outcomes.push({ c, code, output: `${err}\n${out}`, ms: performance.now() - started });
        }
      };
      await Promise.all(Array.from({ length: AT_ONCE }, worker));

      for (const s of servers) s.proc.kill("SIGTERM");
      const serverOutputs = await Promise.all(
        servers.map(async (s) => {
          const timer = setTimeout(() => s.proc.kill("SIGKILL"), 3000);
          const [out, err] = await Promise.all([new Response(s.proc.stdout as ReadableStream).text(), new Response(s.proc.stderr as ReadableStream).text()]);
          clearTimeout(timer);
          return { name: s.name, output: `${err}\n${out}` };
        }),
      );

      const classes = new Map<string, { count: number; example: string[]; excerpt: string }>();
      const note = (sig: string, argv: string[], output: string) => {
        const k = classes.get(sig);
        if (k) k.count++;
        else classes.set(sig, { count: 1, example: argv, excerpt: output.trim().split("\n").slice(0, 8).join("\n") });
      };
      for (const o of outcomes) {
        const sig = crashOf(o.output);
        if (sig) note(sig, o.c.argv, o.output);
      }
      for (const s of serverOutputs) {
        const sig = crashOf(s.output);
        if (sig) note(`server ${s.name}: ${sig}`, [s.name], s.output);
      }
      const byMode = MODES.map((m) => `${m.name} ${outcomes.filter((o) => o.c.mode === m.name).length}`).join(", ");
      const stopped = outcomes.filter((o) => o.ms >= limitMs).length;
      console.log(
        `fuzz argv: ${outcomes.length} cases of ${COMMAND.at(-1)} in ${((performance.now() - t0) / 1000).toFixed(1)} s ` +
          `(seed ${seed}; ${byMode}; ${stopped} stopped at ${limitMs} ms)`,
      );
      const report = [...classes.entries()]
        .sort((a, b) => b[1].count - a[1].count)
        .map(([sig, k]) => `${k.count} x ${sig}\n  replay: anyperf ${k.example.map((w) => JSON.stringify(w)).join(" ")}\n    | ${k.excerpt.replace(/\n/g, "\n    | ")}`)
        .join("\n");
      if (report) throw new Error(`${classes.size} crash classes (seed ${seed}):\n${report}`);
      expect(outcomes.length).toBe(cases.length);
    } finally {
      for (const s of servers) s.proc.kill("SIGKILL");
      holder.kill("SIGKILL");
      killMarked(marker);
      rmSync(work, { recursive: true, force: true });
    }
  },
  // Every case may run to its limit and take a second more to stop (the limit grows on a loaded host); long runs
  // (scripts/fuzz --long) take many minutes.
  120_000 + ((sweepCases(0).length + RUNS) * (CASE_MS + 3000)) / AT_ONCE,
);
