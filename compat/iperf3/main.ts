/**
 * `anyperf iperf3 ...`: the iperf3 dialect's entry. Parses the command line, then runs the server or the client;
 * messages use iperf3's wording ("iperf3: parameter error - ...", "iperf3: error - ...") so scripts see what the
 * stock tool would print, with our fix appended.
 */
import { spawn } from "node:child_process";
import { lstatSync, readFileSync, unlinkSync } from "node:fs";
import { WorkerPool } from "../../src/engine/worker-pool.ts";
import { UserError } from "../../src/errors.ts";
import { checkOutputPath, saveOutput, writeFileAtomic } from "../../src/report/atomic-file.ts";
import { shutdownSignal } from "../../src/signals.ts";
import { VERSION } from "../../src/version.ts";
import { parseIperf3Args } from "./args.ts";
import { loadFdTools } from "./fd-tools.ts";
import { HELP, USAGE_HINT } from "./help.ts";
import { Output } from "./output.ts";
import { systemInfo } from "./side.ts";

const DAEMON_ENV = "ANYPERF_IPERF3_DAEMON_CHILD";

export async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseIperf3Args(argv);
  } catch (e) {
    if (!(e instanceof UserError)) throw e;
    process.stderr.write(`iperf3: ${e.message}\n\n${USAGE_HINT}`);
    // 3.12 exits 1 for every error, a bad argument too (a size or rate from src/units.ts says 2 elsewhere).
    return 1;
  }
  if (parsed.kind === "help") {
    process.stdout.write(HELP);
    return 0;
  }
  if (parsed.kind === "version") {
    process.stdout.write(`iperf 3.12 (anyperf ${VERSION})\n${systemInfo()}\n`);
    return 0;
  }
  const plan = parsed.plan;
  let out;
  try {
    // Both files are checked before anything runs: a path that cannot be written fails in one line, not after a test.
    if (plan.pidfile !== undefined) checkOutputPath("unable to write PID file: --pidfile", plan.pidfile);
    if (plan.output.logfile !== undefined) checkOutputPath("unable to open log file: --logfile", plan.output.logfile);
    const textTitle = plan.role === "client" && !plan.output.json && !plan.output.jsonStream ? plan.params.title : undefined;
    out = new Output({ logfile: plan.output.logfile, timestamps: plan.output.timestamps, title: textTitle });
  } catch (e) {
    if (!(e instanceof UserError)) throw e;
    process.stderr.write(`iperf3: error - ${e.message}\n`);
    return e.exitCode;
  }
  try {
    if (plan.role === "server" && plan.daemon && process.env[DAEMON_ENV] !== "1") return daemonize();
    const pidfile = plan.pidfile;
    if (pidfile) saveOutput("unable to write PID file: --pidfile", pidfile, () => writeFileAtomic(pidfile, `${process.pid}`));
    const fd = await loadFdTools();
    const signal = shutdownSignal();
    // Workers take a moment to load; start them now so the first data stream does not wait for them.
    WorkerPool.shared();
    if (plan.role === "server") {
      const { runServer } = await import("./server.ts");
      return await runServer(plan, out, fd, signal);
    }
    const { runClient } = await import("./client.ts");
    return await runClient(plan, out, fd, signal);
  } catch (e) {
    if (!(e instanceof UserError)) throw e;
    out.err(`iperf3: error - ${e.message}\n`);
    return e.exitCode;
  } finally {
    if (plan.pidfile) removePidfile(plan.pidfile);
  }
}

/**
 * Removes the pid file only while it is still the one we wrote: a regular file holding our pid. Stock iperf3 unlinks
 * whatever the path names at exit, even a device node or another server's pid file written there since.
 */
function removePidfile(path: string): void {
  try {
    const st = lstatSync(path);
    // A pid is a few digits: a bigger file is not ours and is not read.
    if (st.isFile() && st.size <= 32 && readFileSync(path, "utf8").trim() === `${process.pid}`) unlinkSync(path);
  } catch {
    // already gone, or not ours to read
  }
}

/** -D: the same command in a detached child that outlives us (its output goes to --logfile, or nowhere). */
function daemonize(): number {
  const [exe, ...args] = process.argv;
  const child = spawn(exe!, args, { detached: true, stdio: "ignore", env: { ...process.env, [DAEMON_ENV]: "1" } });
  child.unref();
  return 0;
}
