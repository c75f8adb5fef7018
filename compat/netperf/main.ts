import { spawn } from "node:child_process";
import { loadNet } from "../../src/net/net.ts";
import { alarmEndsRun, interruptedExitCode, shutdownSignal } from "../../src/signals.ts";
import { runNetperf } from "./client.ts";
import { runCalibrate } from "./calibrate.ts";
import { runTcpCc } from "./tcp-cc.ts";
import { runTcpMss } from "./tcp-mss.ts";
import { runTcpSendfile } from "./tcp-sendfile.ts";
import { printUuid } from "./classic-phase.ts";
import { parseNetperfArgs, unappliedOptionNotes } from "./netperf-args.ts";
import { parseNetserverArgs } from "./netserver-args.ts";
import { runNetserver } from "./server.ts";
import { serverPolicyArgs } from "../../src/access/server-policy.ts";

const CLASSIC_RUNS = { TCP_MSS: runTcpMss, TCP_CC: runTcpCc, TCP_SENDFILE: runTcpSendfile, UUID: printUuid };

/** `anyperf netperf ...` (or the binary run as `netperf`): netperf 2.7.0's command line, output and protocol. */
export async function netperfMain(argv: string[]): Promise<number> {
  const cmd = parseNetperfArgs(argv);
  if (cmd.kind === "print") {
    (cmd.stdout ? process.stdout : process.stderr).write(cmd.text);
    return cmd.exitCode;
  }
  alarmEndsRun();
  const signal = shutdownSignal();
  const net = await loadNet();
  const io = {
    net,
    out: (t: string) => void process.stdout.write(t),
    err: (t: string) => void process.stderr.write(t),
    signal,
  };
  if (cmd.kind !== "calibrate") for (const note of unappliedOptionNotes(cmd.plan)) io.err(note);
  const code = cmd.kind === "calibrate" ? await runCalibrate(cmd, io) : cmd.kind === "classic" ? await CLASSIC_RUNS[cmd.test](cmd.plan, io) : await runNetperf(cmd.plan, io);
  // netperf takes SIGINT and SIGALRM as "time is up": the test ends early, reports, and the exit status is the test's own.
  if (signal.reason === "SIGINT" || signal.reason === "SIGALRM") return code;
  return interruptedExitCode(signal) ?? code;
}

/** Set in the detached server: it reports its start (or failure) to the parent, then writes nothing more. */
const DETACHED_ENV = "ANYPERF_NETSERVER_DETACHED";
/** How long the parent waits for the detached server to listen or fail. */
const START_TIMEOUT_MS = 15_000;

/** `anyperf netserver ...` (or run as `netserver`). Without -D it detaches, as netserver daemonises. */
export async function netserverMain(argv: string[]): Promise<number> {
  const cmd = parseNetserverArgs(argv);
  if (cmd.kind === "print") {
    (cmd.stdout ? process.stdout : process.stderr).write(cmd.text);
    return cmd.exitCode;
  }
  const detached = process.env[DETACHED_ENV] === "1";
  if (!cmd.plan.foreground && !detached) return daemonize(argv);
  const signal = shutdownSignal();
  // A detached server's stdout and stderr are pipes to a parent that exits once we listen.
  let attached = true;
  await runNetserver(cmd.plan, {
    out: (t) => void (attached && process.stdout.write(t)),
    err: (t) => void (attached && process.stderr.write(t)),
    signal,
    started: () => {
      if (detached) attached = false;
    },
  });
  return interruptedExitCode(signal) ?? 0;
}

/**
 * netserver without -D: the server runs on in a detached process; this one relays what it printed up to the moment
 * it listens (the "Starting netserver" line) or failed (the reason, and its exit status), then returns.
 */
function daemonize(argv: string[]): Promise<number> {
  // From source the runtime needs the entry script; a compiled binary is its own entry.
  const script = process.argv[1] && /\.ts$/.test(process.argv[1]) ? [process.argv[1]] : [];
  // The global --allow / --max-* options were taken out of argv by main.ts: the detached server needs them back.
  const child = spawn(process.execPath, [...script, "netserver", ...serverPolicyArgs(), ...argv], {
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, [DETACHED_ENV]: "1" },
  });
  return new Promise((resolve) => {
    let out = "";
    let err = "";
    let settled = false;
    const settle = (code: number) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.stdout.destroy();
      child.stderr.destroy();
      child.removeAllListeners();
      child.unref();
      process.stdout.write(out);
      process.stderr.write(err);
      resolve(code);
    };
    const timer = setTimeout(() => {
      child.kill();
      err += `netserver: the detached server did not start within ${START_TIMEOUT_MS / 1000} s: run with -D to see why\n`;
      settle(1);
    }, START_TIMEOUT_MS);
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      if (out.includes("\n")) settle(0);
    });
    child.stderr.on("data", (d: Buffer) => void (err += d.toString()));
    child.on("error", (e) => {
      err += `netserver: cannot start the detached server: ${e.message}\n`;
      settle(1);
    });
    // "close" comes after the exit and after stderr, which holds the reason, has been read to its end.
    child.on("close", (code) => settle(code ?? 1));
  });
}
