import { spawn } from "node:child_process";
import { WorkerPool } from "../../src/engine/worker-pool.ts";
import { loadNet } from "../../src/net/net.ts";
import { shutdownSignal } from "../../src/signals.ts";
import { loadHandOff } from "../../src/net/hand-off.ts";
import { VERSION } from "../../src/version.ts";
import { parseIperf2Args } from "./args.ts";
import { runClient } from "./client.ts";
import type { ServerPlan } from "./plan.ts";
import { Printer } from "./printer.ts";
import { Ids, TcpServer, type ServerIo } from "./tcp-server.ts";
import { UdpServer } from "./udp-server.ts";
import { IPERF2_USAGE } from "./usage.ts";
import { serverPolicyArgs } from "../../src/access/server-policy.ts";

/** `anyperf iperf ...` (or the binary run as `iperf`): iperf 2.1.8's command line, output and wire protocol. */
export async function main(argv: string[]): Promise<number> {
  const cmd = parseIperf2Args(argv);
  if (cmd.kind === "help") {
    // iperf 2.1.8 writes its usage to stderr and exits 1, for -h and --help alike.
    process.stderr.write(IPERF2_USAGE);
    return 1;
  }
  if (cmd.kind === "version") {
    process.stderr.write(`iperf version 2.1.8 (anyperf ${VERSION}) pthreads\n`);
    return 0;
  }
  const { plan } = cmd;
  if (plan.role === "server" && plan.daemon) return daemonize(argv);
  // Data Workers take a moment to start: begin now, so the first test's clock does not run while they load.
  if (plan.role === "client" || !plan.udp) WorkerPool.shared();
  const signal = shutdownSignal();
  const [net, handOff] = await Promise.all([loadNet(), loadHandOff()]);
  const sockopt = handOff.sockopt;
  const printer = Printer.to(plan.output, plan.csv);
  const warn = (text: string) => process.stderr.write(`anyperf iperf: ${text}\n`);
  // iperf 2 takes Ctrl+C and SIGTERM as the end of the run: it reports what it measured and exits 0 (2.1.8, client
  // and server alike), so the run's own status stands.
  if (plan.role === "client") return runClient(plan, { net, sockopt, handOff, printer, signal, warn });
  await runServer(plan, { net, sockopt, handOff, printer, signal, warn });
  return 0;
}

async function runServer(plan: ServerPlan, io: ServerIo): Promise<void> {
  const ids = new Ids();
  const server = plan.udp ? new UdpServer(plan, io, ids) : new TcpServer(plan, io, ids);
  await server.start();
  if (plan.timeLimitS) {
    const t = setTimeout(() => void server.stop(), plan.timeLimitS * 1000);
    void server.done.then(() => clearTimeout(t));
  }
  await server.done;
}

/** -D: the same server without -D, detached and without a terminal; this process says so and exits like iperf -D. */
function daemonize(argv: string[]): number {
  const rest = argv.filter((a) => a !== "-D" && a !== "--daemon");
  // From source the runtime needs the entry script; a compiled binary is its own entry.
  const script = process.argv[1] && /\.ts$/.test(process.argv[1]) ? [process.argv[1]] : [];
  // main.ts took the global --allow / --max-* options out of argv: the detached server needs them back.
  const child = spawn(process.execPath, [...script, "iperf", ...serverPolicyArgs(), ...rest], { detached: true, stdio: "ignore" });
  child.unref();
  process.stdout.write(`Running Iperf Server as a daemon (pid ${child.pid})\n`);
  return 0;
}
