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
import { runIperf3Peer } from "./iperf3-run.ts";
import { runNetperfPeer } from "./netperf-run.ts";
import { runIperf2Peer } from "./iperf2-run.ts";
import { runNtttcpPeer } from "./ntttcp-run.ts";
import { DEFAULT_PORT as IPERF2_PORT } from "../iperf2/plan.ts";
import { LINUX_DEFAULTS } from "../ntttcp/linux-options.ts";
import { refuse } from "./refuse.ts";

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
  if (opts.targets.length > 1) return manyServers(opts.targets, forced, rest, hooks);
  const ports = opts.portGiven ? [opts.target.port] : forced === "ntttcp" ? [NTTTCP_PORT] : DRIVEN.filter((d) => forced === undefined || d.peer === forced).map((d) => d.port);
  const found = forced !== undefined ? { peer: forced, port: ports[0]! } : await findPeer(opts.target.host, ports, shutdownSignal());
  const withPort = opts.portGiven ? rest : [...rest, "-p", String(found.port)];
  if (found.peer === "anyperf") return clientMain(withPort, hooks);
  const no = refuse(found.peer);
  if (opts.responsiveness) no("--responsiveness", "its server has no latency probe under load; run it against 'anyperf serve'");
  if (opts.tokenGiven) no("--token", "it takes no token; drop it");
  const version = "version" in found ? found.version : undefined;
  const drive: ClientDriver =
    found.peer === "netperf"
      ? runNetperfPeer
      : found.peer === "iperf"
        ? (plan, target, h) => runIperf2Peer(plan, target, version, h)
        : found.peer === "ntttcp"
          ? runNtttcpPeer
          : runIperf3Peer;
  return clientMain(withPort, hooks, drive);
}

/**
 * A run over many servers drives anyperf serve's native server on each: a server the probe names as another peer is
 * refused in one line, before any test starts. One that answers nothing nameable is left to the run, which names it.
 */
async function manyServers(targets: readonly { host: string; port: number }[], forced: PeerName | undefined, rest: string[], hooks: { onRun?: (run: TestRun) => void }): Promise<number> {
  const many = "a run over many servers drives 'anyperf serve' (its native port) on each";
  if (forced !== undefined) throw new UserError(`--peer ${forced}: ${many}; drop --peer, or run each ${forced} server alone`, 2);
  const signal = shutdownSignal();
  const answers = await Promise.all(targets.map((t) => probe(t.host, t.port, signal)));
  answers.forEach((a, i) => {
    const t = targets[i]!;
    if (a.peer && a.peer !== "anyperf") throw new UserError(`${t.host.includes(":") ? `[${t.host}]` : t.host}:${t.port} is served by ${a.peer}: ${many}; run it alone (anyperf client ${t.host} -p ${t.port})`, 2);
  });
  return clientMain(rest, hooks);
}
