/**
 * `anyperf client HOST[:PORT]` against whatever serves the port: anyperf's native server, or a stock iperf3, iperf 2
 * or netperf server driven through that dialect's client. It lives beside compat/serve/ because it fronts the
 * dialects; the native run itself stays in src/native/.
 */
import { UserError } from "../../src/errors.ts";
import type { TestRun } from "../../src/engine/test-run.ts";
import { shutdownSignal } from "../../src/signals.ts";
import { clientMain, parseClientArgs, type ClientDriver } from "../../src/native/client-cli.ts";
import { NATIVE_DEFAULT_PORT } from "../../src/native/server.ts";
import { takeProcedureOptions } from "../../src/procedure/options.ts";
import { Defaults } from "../../interop/iperf3/constants.ts";
import { PEERS, type PeerName } from "./detect.ts";
import { probe } from "./probe.ts";
import { iperf3ClientPlan, runIperf3Peer } from "./iperf3-run.ts";
import { netperfArgv, runNetperfPeer } from "./netperf-run.ts";
import { iperf2ClientPlan, runIperf2Peer } from "./iperf2-run.ts";
import { ntttcpSenderPlan, runNtttcpPeer } from "./ntttcp-run.ts";
import { parseNetperfArgs } from "../netperf/netperf-args.ts";
import type { Plan } from "../../src/plan.ts";
import type { ClientTarget } from "../../src/native/client.ts";
import { DEFAULT_PORT as IPERF2_PORT } from "../iperf2/plan.ts";
import { LINUX_DEFAULTS } from "../ntttcp/linux-options.ts";
import { refuse } from "./refuse.ts";
import { runManyServers, type Served, type StockDriver } from "./many-servers.ts";
import { runMultiHostClient } from "../../src/native/multi-client.ts";

/** The peers `anyperf client` drives, with the port each listens on by default, in the order they are tried. */
const DRIVEN: { peer: PeerName; port: number }[] = [
  { peer: "anyperf", port: NATIVE_DEFAULT_PORT },
  { peer: "iperf3", port: Defaults.port },
  { peer: "iperf", port: IPERF2_PORT },
  { peer: "netperf", port: 12865 },
];

/** An ntttcp receiver answers no probe (it reads and discards whatever arrives), so it is driven only when named. */
const NTTTCP_PORT = LINUX_DEFAULTS.basePort;

/** Takes --peer NAME (or --peer=NAME) out of argv. */
export function takePeer(argv: readonly string[]): { peer?: PeerName; rest: string[] } {
  const rest: string[] = [];
  let peer: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--") {
      rest.push(...argv.slice(i));
      break;
    }
    if (a === "--peer" || a.startsWith("--peer=")) {
      const v = a === "--peer" ? argv[++i] : a.slice("--peer=".length);
      if (v === undefined || !(PEERS as readonly string[]).includes(v)) throw new UserError(`--peer ${v ?? ""}: pass one of ${PEERS.join(", ")}`, 2);
      peer = v;
    } else rest.push(a);
  }
  return { peer: peer as PeerName | undefined, rest };
}

/**
 * The first candidate port whose server the probe names. When none is named, the native client runs against the given
 * port (or the first that took the connection) and says in its own words what is wrong there (closed before
 * answering, no answer within its deadline, refused).
 */
async function findPeer(host: string, ports: number[], signal: AbortSignal): Promise<{ peer: PeerName; port: number; version?: string }> {
  let open: number | undefined;
  for (const port of ports) {
    const a = await probe(host, port, signal);
    const at = `${host.includes(":") ? `[${host}]` : host}:${port}`;
    if (signal.aborted) throw new UserError(`interrupted while asking ${at} what it serves`, 130);
    if (a.peer === "iperf3" && a.busy) throw new UserError(`${at} is an iperf3 server running another test (it serves one at a time): try again when it is done`);
    if (a.peer) return { peer: a.peer, port, ...("version" in a && a.version !== undefined ? { version: a.version } : {}) };
    if (!("refused" in a && a.refused)) open ??= port;
  }
  return { peer: "anyperf", port: open ?? ports[0]! };
}

export async function anyClientMain(argv: string[], hooks: { onRun?: (run: TestRun) => void } = {}): Promise<number> {
  const { peer: forced, rest } = takePeer(argv);
  const proc = takeProcedureOptions(rest);
  const opts = parseClientArgs(proc.rest);
  if (opts.help || forced === "anyperf") return clientMain(rest, hooks);
  if (opts.targets.length > 1) return manyServers(opts, forced, rest, hooks);
  const ports = opts.portGiven ? [opts.target.port] : forced === "ntttcp" ? [NTTTCP_PORT] : DRIVEN.filter((d) => forced === undefined || d.peer === forced).map((d) => d.port);
  const found = forced !== undefined ? { peer: forced, port: ports[0]! } : await findPeer(opts.target.host, ports, shutdownSignal());
  const withPort = opts.portGiven ? rest : [...rest, "-p", String(found.port)];
  if (found.peer === "anyperf") return clientMain(withPort, hooks);
  refuseFor(found.peer, opts);
  return clientMain(withPort, hooks, driverFor(found.peer, "version" in found ? found.version : undefined));
}

/** What no stock server carries, refused before anything starts, naming the peer. */
function refuseFor(peer: Exclude<PeerName, "anyperf">, opts: { responsiveness: boolean; tokenGiven: boolean }): void {
  const no = refuse(peer);
  if (opts.responsiveness) no("--responsiveness", "its server has no latency probe under load; run it against 'anyperf serve'");
  if (opts.tokenGiven) no("--token", "it takes no token; drop it");
}

/** What `peer`'s protocol cannot carry of the plan, refused (in one line naming it) before any server's test starts. */
function carries(peer: Exclude<PeerName, "anyperf">, plan: Plan, target: ClientTarget): void {
  if (peer === "netperf") parseNetperfArgs(netperfArgv(plan, target));
  else if (peer === "iperf") iperf2ClientPlan(plan, target);
  else if (peer === "ntttcp") ntttcpSenderPlan(plan, target);
  else iperf3ClientPlan(plan, target);
}

/** The dialect client that runs a test against a stock server, reporting anyperf's Results. */
function driverFor(peer: Exclude<PeerName, "anyperf">, version: string | undefined): ClientDriver {
  if (peer === "netperf") return runNetperfPeer;
  if (peer === "iperf") return (plan, target, h) => runIperf2Peer(plan, target, version, h);
  if (peer === "ntttcp") return runNtttcpPeer;
  return runIperf3Peer;
}

/**
 * A run over many servers: each one's port asked what serves it (the candidate ports in order when its entry names
 * none and -p is not given; --peer names them all), then anyperf serves run as one native Test and stock servers
 * through their dialects' clients beside it, over one common window (many-servers.ts).
 */
async function manyServers(opts: ReturnType<typeof parseClientArgs>, forced: PeerName | undefined, rest: string[], hooks: { onRun?: (run: TestRun) => void }): Promise<number> {
  const signal = shutdownSignal();
  const served: Served[] = await Promise.all(
    opts.targets.map(async (target, i) => {
      if (forced !== undefined) return { target: opts.portsGiven[i] ? target : { ...target, port: forced === "ntttcp" ? NTTTCP_PORT : DRIVEN.find((d) => d.peer === forced)!.port }, peer: forced };
      const found = await findPeer(target.host, opts.portsGiven[i] ? [target.port] : DRIVEN.map((d) => d.port), signal);
      return { target: { ...target, port: found.port }, peer: found.peer, ...(found.version !== undefined ? { version: found.version } : {}) };
    }),
  );
  for (const s of served) {
    if (s.peer === "anyperf") continue;
    refuseFor(s.peer, opts);
    carries(s.peer, opts.plan, s.target);
  }
  if (served.every((s) => s.peer === "anyperf")) return clientMain(rest, hooks, undefined, (plan, targets, h) => runMultiHostClient(plan, targets.map((t, i) => ({ ...t, port: served[i]!.target.port })), h));
  const stock: StockDriver = (plan, s, h) => driverFor(s.peer as Exclude<PeerName, "anyperf">, s.version)(plan, s.target, h);
  return clientMain(rest, hooks, undefined, (plan, targets, h) => runManyServers(plan, targets.map((t, i) => ({ ...served[i]!, target: { ...t, port: served[i]!.target.port } })), stock, h));
}
