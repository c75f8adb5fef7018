import { spawn } from "node:child_process";
import { loadNet } from "../../src/net/net.ts";
import { interruptedExitCode, shutdownSignal } from "../../src/signals.ts";
import { runNetperf } from "./client.ts";
import { parseNetperfArgs } from "./netperf-args.ts";
import { parseNetserverArgs } from "./netserver-args.ts";
import { runNetserver } from "./server.ts";

/** `anyperf netperf ...` (or the binary run as `netperf`): netperf 2.7.0's command line, output and protocol. */
export async function netperfMain(argv: string[]): Promise<number> {
  const cmd = parseNetperfArgs(argv);
  if (cmd.kind === "print") {
    (cmd.exitCode === 0 ? process.stdout : process.stderr).write(cmd.text);
    return cmd.exitCode;
  }
  const signal = shutdownSignal();
  const net = await loadNet();
  const code = await runNetperf(cmd.plan, {
    net,
    out: (t) => void process.stdout.write(t),
    err: (t) => void process.stderr.write(t),
    signal,
  });
  return interruptedExitCode(signal) ?? code;
}

/** `anyperf netserver ...` (or run as `netserver`). Without -D it detaches, as netserver daemonises. */
export async function netserverMain(argv: string[]): Promise<number> {
  const cmd = parseNetserverArgs(argv);
  if (cmd.kind === "print") {
    (cmd.exitCode === 0 ? process.stdout : process.stderr).write(cmd.text);
    return cmd.exitCode;
  }
  if (!cmd.plan.foreground) return daemonize(argv);
  const signal = shutdownSignal();
  await runNetserver(cmd.plan, {
    out: (t) => void process.stdout.write(t),
    err: (t) => void process.stderr.write(t),
    signal,
  });
  return interruptedExitCode(signal) ?? 0;
}

function daemonize(argv: string[]): number {
  // From source the runtime needs the entry script; a compiled binary is its own entry.
  const script = process.argv[1] && /\.ts$/.test(process.argv[1]) ? [process.argv[1]] : [];
  const child = spawn(process.execPath, [...script, "netserver", "-D", ...argv], { detached: true, stdio: "ignore" });
  child.unref();
  return 0;
}
