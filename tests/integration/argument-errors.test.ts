/**
 * Issue 29 item 2: every argument error is one line on stderr naming the user's flag, with no stack trace and no
 * internal-error safety net ("please report"); the native modes (loopback, client, serve, history, compare, report,
 * the procedure options) exit 2, a dialect exits as its peer does for a bad argument (README "Help, errors and exit
 * status"). Each flag that takes a value gets an empty value, and each numeric one garbage and out-of-range values.
 * Every case runs in a network namespace of its own (only loopback, nothing listening): a value read as a host
 * reaches nothing, and a case that wrongly starts a test is refused at once instead of measuring.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { valuedFlags } from "../../src/negative-values.ts";
import { CLIENT_OPTIONS } from "../../src/native/client-cli.ts";
import { LOOPBACK_OPTIONS } from "../../src/native/loopback-cli.ts";
import { POLICY_FLAGS } from "../../src/access/server-policy.ts";

const MAIN = join(import.meta.dir, "..", "..", "main.ts");
const dir = mkdtempSync(join(tmpdir(), "anyperf-argument-errors-"));
const canUnshare = process.platform === "linux" && Bun.spawnSync(["unshare", "-n", "true"]).exitCode === 0;

interface Case {
  argv: string[];
  /** Spellings of the flag the line must name (long and short). */
  flag: string[];
  /** undefined: 2 (native modes); a dialect's own status otherwise. */
  code?: number;
  /** A dialect that prints its peer's usage tail after the error line (iperf3: a blank line, Usage:, Try ...). */
  tail?: RegExp;
}

/** Long and short spelling of each parseArgs option. */
function spellings(options: Record<string, { type: string; short?: string }>, flag: string): string[] {
  const name = flag.replace(/^--?/, "");
  const entry = Object.entries(options).find(([n, o]) => n === name || o.short === name);
  return entry ? [`--${entry[0]}`, ...(entry[1].short ? [`-${entry[1].short}`] : [])] : [flag];
}

/** Numeric flags of the native plan (and the global server options), with values out of their range. */
const NUMERIC: Record<string, string[]> = {
  "--time": ["garbage", "-1", "1e309", "0"],
  "--bytes": ["garbage", "-1", "0"],
  "--parallel": ["garbage", "-1", "0", "1.5"],
  "--rate": ["garbage", "-1"],
  "--length": ["garbage", "-1", "0"],
  "--window": ["garbage", "-1", "0", "1T"],
  "--warmup": ["garbage", "-1"],
  "--cooldown": ["garbage", "-1"],
  "--interval": ["garbage", "-1", "0"],
  "--workers": ["garbage", "0"],
  "--port": ["garbage", "-1", "0", "65536"],
  "--rr": ["garbage", "-1"],
  "--link-speed": ["garbage", "-1"],
  "--start-at": ["garbage"],
  "--max-tests": ["garbage", "-1", "0"],
  "--max-streams": ["garbage", "0"],
  "--max-duration": ["garbage", "-1"],
  "--max-rate": ["garbage", "-1"],
  "--http": ["garbage", "-1", "65536"],
};

function nativeCases(): Case[] {
  const out: Case[] = [];
  const modes: [string[], Record<string, { type: string; short?: string }>][] = [
    [["loopback", "-t", "1"], LOOPBACK_OPTIONS],
    [["client", "127.0.0.1", "-t", "1"], CLIENT_OPTIONS],
  ];
  for (const [prefix, options] of modes) {
    const flags = [...valuedFlags(options).filter((f) => f.startsWith("--")), ...Object.values(POLICY_FLAGS), "--http", "--history"];
    for (const flag of new Set(flags)) {
      const names = spellings(options, flag);
      // --time with -n, or -n with the -t in the prefix: the prefix's -t goes where it would clash.
      const base = flag === "--bytes" ? prefix.slice(0, -2) : prefix;
      out.push({ argv: [...base, flag, ""], flag: names });
      for (const v of NUMERIC[flag] ?? []) out.push({ argv: [...base, flag, v], flag: names });
    }
  }
  const serve = ["serve", "--iperf3", "off", "--iperf", "off", "--netserver", "off", "--ntttcp", "off"];
  for (const flag of ["--port", "--iperf3", "--iperf", "--netserver", "--ntttcp"]) {
    for (const v of ["", "garbage", "-1", "0", "65536"]) {
      const argv = [...serve.filter((w, i) => w !== flag && serve[i - 1] !== flag), flag, v];
      out.push({ argv, flag: flag === "--port" ? ["--port", "-p"] : [flag] });
    }
  }
  for (const [flag, names] of [["-B", ["--bind", "-B"]], ["--token", ["--token"]], ["--token-file", ["--token-file"]]] as const) out.push({ argv: [...serve, flag, ""], flag: [...names] });
  out.push({ argv: ["history", "--history", ""], flag: ["--history"] });
  out.push({ argv: ["compare", "--history", "", "a", "b"], flag: ["--history"] });
  out.push({ argv: ["report", "-o", ""], flag: ["-o"] });
  out.push({ argv: ["report", "-o", "x.html", "--history", ""], flag: ["--history"] });
  out.push({ argv: ["loopback", "--repeat", "0"], flag: ["--repeat"] });
  out.push({ argv: ["loopback", "--repeat", ""], flag: ["--repeat"] });
  out.push({ argv: ["loopback", "--sweep", "garbage"], flag: ["--sweep"] });
  out.push({ argv: ["loopback", "--sweep", "streams="], flag: ["--sweep"] });
  // A mistyped flag is named as unknown, without node's advice on positionals after '--'.
  out.push({ argv: ["client", "127.0.0.1", "--json-file", "x"], flag: ["unknown option '--json-file'"] });
  return out;
}

const IPERF3_TAIL = /^\n+Usage: anyperf iperf3 \[-s\|-c host\] \[options\]\nTry `anyperf iperf3 --help' for more information\.\n$/;

/** Values the peers themselves refuse (a value their atoi() takes, they take too: that is not an error here). */
function dialectCases(): Case[] {
  const c3 = ["iperf3", "-c", "127.0.0.1", "-t", "1"];
  const c2 = ["iperf", "-c", "127.0.0.1", "-t", "1"];
  return [
    ...["-P", "-l", "-b", "-p", "-w"].flatMap((f) => ["garbage", "-1"].map((v) => ({ argv: [...c3, f, v], flag: [f], code: 1, tail: IPERF3_TAIL }))),
    { argv: [...c3, "-B", ""], flag: ["-B"], code: 1, tail: IPERF3_TAIL },
    { argv: ["iperf3", "-s", "-p", "65536"], flag: ["-p"], code: 1, tail: IPERF3_TAIL },
    ...["-P", "-p", "-M"].flatMap((f) => ["garbage", "-1"].map((v) => ({ argv: [...c2, f, v], flag: [f], code: 1 }))),
    { argv: [...c2, "-B", ""], flag: ["-B"], code: 1 },
    { argv: ["iperf", "-s", "-o", ""], flag: ["-o"], code: 1 },
    { argv: ["netperf", "-H", "127.0.0.1", "-p", "65536"], flag: ["-p"], code: 1 },
    { argv: ["netserver", "-p", "garbage"], flag: ["-p"], code: 1 },
    { argv: ["ntttcp", "-s127.0.0.1", "-p", "99999"], flag: ["-p", "port"], code: 1 },
    { argv: ["ntttcp", "--windows", "-s", "-m", "1,*,127.0.0.1", "-t", "garbage"], flag: ["-t"], code: 9 },
  ];
}

const CRASH = /\n\s+at |Bun v\d|please report|ZodError|Too (big|small): expected|Invalid input|internal error|Unhandled|uncaught/i;

let holder: ReturnType<typeof Bun.spawn> | undefined;
let enter: string[] = [];

describe.skipIf(!canUnshare)("argument errors: one line naming the flag", () => {
  beforeAll(async () => {
    holder = Bun.spawn(["unshare", "-n", "sleep", "900"], { stdout: "ignore", stderr: "ignore" });
    await Bun.sleep(100);
    enter = ["nsenter", "-t", String(holder.pid), "-n", "--"];
    expect(Bun.spawnSync([...enter, "ip", "link", "set", "lo", "up"]).exitCode).toBe(0);
  });
  afterAll(() => {
    holder?.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  const cases = [...nativeCases(), ...dialectCases()];
  test(`${cases.length} command lines`, async () => {
    const failures: string[] = [];
    let next = 0;
    const worker = async () => {
      while (next < cases.length) {
        const c = cases[next++]!;
        const p = Bun.spawn([...enter, process.execPath, MAIN, ...c.argv], { stdout: "pipe", stderr: "pipe", stdin: "ignore", cwd: dir });
        const kill = setTimeout(() => p.kill("SIGKILL"), 20_000);
        const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
        clearTimeout(kill);
        const [first = "", ...rest] = err.split("\n");
        const tail = rest.join("\n");
        const problems = [
          code !== (c.code ?? 2) && `exit ${code}, not ${c.code ?? 2}`,
          !c.flag.some((f) => first.includes(f)) && `the line does not name ${c.flag.join(" or ")}`,
          !(c.tail ? c.tail.test(`\n${tail}`) || tail === "" : tail === "") && "more than one line",
          CRASH.test(out + err) && "a crash",
          out.trim() !== "" && c.code === undefined && "output on stdout",
        ].filter(Boolean);
        if (problems.length) failures.push(`${JSON.stringify(c.argv)}: ${problems.join(", ")}\n    ${err.trim().split("\n").join("\n    ")}`);
      }
    };
    await Promise.all(Array.from({ length: 4 }, worker));
    expect(failures).toEqual([]);
  }, 900_000);
});
