import { parseArgs } from "node:util";
import { negativeValues, valuedFlags } from "../negative-values.ts";
import { UserError } from "../errors.ts";
import { resolveToken } from "../access/secret.ts";
import type { TestRun } from "../engine/test-run.ts";
import { runProcedure } from "../procedure/run-procedure.ts";
import { PROCEDURE_USAGE, takeProcedureOptions } from "../procedure/options.ts";
import { OUTPUT_USAGE, PLAN_OPTIONS, planFromValues, planUsage } from "./plan-args.ts";
import { hostPorts, readHostsFile, splitHostPort } from "./host-list.ts";
import { runNativeClient, type ClientTarget } from "./client.ts";
import { runMultiHostClient } from "./multi-client.ts";
import { diagnoseTestedHost } from "./diagnose-run.ts";
import type { Plan } from "../plan.ts";
import type { Results } from "../report/result.ts";
import { NATIVE_DEFAULT_PORT } from "./server.ts";
import { parseLinkSpeed } from "../host/link.ts";
import { LOAD_WARMUP_S, RESPONSIVENESS_STREAMS } from "./responsiveness.ts";
import { responsivenessMain } from "./responsiveness-cli.ts";
import { parseStartAt, waitUntil } from "../fleet/start-at.ts";
import { startRouteEnabled, waitForStart } from "../status/readiness.ts";
import { interruptedExitCode, shutdownSignal } from "../signals.ts";

export const CLIENT_USAGE = `usage: anyperf client HOST[:PORT] [options]    (against 'anyperf serve', a stock iperf3 -s, iperf -s, netserver or ntttcp -r)
       anyperf client HOST1[:PORT] HOST2[:PORT]... [--hosts FILE] [options]   (one test across many servers of any of those kinds)
  -p, --port PORT      the server's port (default: the first that answers of ${NATIVE_DEFAULT_PORT} anyperf, 5201 iperf3, 5001 iperf, 12865 netserver)
      --hosts FILE     more servers, one HOST[:PORT] a line (# comments; -p is the port of those without one):
                       all start together, -P N each, one window for all; a row per server and the whole run
      --peer NAME      what serves the port (every port, with many), instead of asking: anyperf, iperf3, iperf (iperf 2), netperf or ntttcp;
                       name iperf for a UDP-only 'iperf -s -u' and 'anyperf iperf -s', and ntttcp for an ntttcp receiver
                       (PORT its base data port, 5001): none of them answers the probe
${planUsage("1")}
  -R, --reverse        the server sends, this host receives
      --bidir          both directions at once
      --token T        the token the server was started with (--token)
      --token-file F   the same, read from the first line of F (or set ANYPERF_TOKEN)
      --start-at T     connect and start at this RFC 3339 time (2026-12-03T12:00:00Z): N clients start together
      --paused         wait for POST /start on the status endpoint (needs --http) before connecting
      --link-speed R   the link's rate (1G) for the diagnosis, where this host cannot read it (shaped, virtual)
      --responsiveness latency under load: a 1-byte request/response probe idle, then beside -P bulk streams
                       (default ${RESPONSIVENESS_STREAMS}) up, down and both ways, -t seconds each after --warmup (default ${LOAD_WARMUP_S})
${PROCEDURE_USAGE}
${OUTPUT_USAGE}`;

/** `anyperf client`'s options, as node:util parseArgs reads them. */
export const CLIENT_OPTIONS = {
  ...PLAN_OPTIONS,
  port: { type: "string", short: "p" },
  reverse: { type: "boolean", short: "R" },
  bidir: { type: "boolean" },
  token: { type: "string" },
  "token-file": { type: "string" },
  "link-speed": { type: "string" },
  "start-at": { type: "string" },
  paused: { type: "boolean" },
  responsiveness: { type: "boolean" },
  hosts: { type: "string" },
} as const;

/** Options that take a value: a negative number after one is its value (to be range-checked), not an option. */
const CLIENT_VALUED = valuedFlags(CLIENT_OPTIONS);

/** argv → plan, target and output choices for `anyperf client`. */
export function parseClientArgs(argv: string[]) {
  const { values, positionals } = parseArgs({
    args: negativeValues(argv, CLIENT_VALUED),
    strict: true,
    allowPositionals: true,
    options: CLIENT_OPTIONS,
  });
  const help = values.help ?? false;
  const entries = [...positionals, ...(values.hosts === undefined || help ? [] : readHostsFile(values.hosts))];
  if (!help && entries.length === 0) throw new UserError("no server given: pass the host running 'anyperf serve', e.g. anyperf client 192.0.2.7", 2);
  const servers = help ? [{ host: "", port: NATIVE_DEFAULT_PORT, text: "" }] : hostPorts(entries, values.port, NATIVE_DEFAULT_PORT);
  const { host, port } = servers[0]!;
  const responsive = values.responsiveness ?? false;
  const plan = planFromValues(values, { streams: responsive ? RESPONSIVENESS_STREAMS : 1 });
  if (responsive) {
    const clash = values.rr !== undefined ? "--rr" : values.crr ? "--crr" : values.udp ? "-u" : values.reverse ? "-R" : values.bidir ? "--bidir" : values.bytes !== undefined ? "-n" : values.csv !== undefined ? "--csv" : values.push !== undefined ? "--push" : values.pushgateway !== undefined ? "--pushgateway" : values["link-speed"] !== undefined ? "--link-speed" : undefined;
    if (clash) throw new UserError(`${clash} does not apply to --responsiveness (its own probe, TCP load both ways, -t seconds per phase): drop one`, 2);
  }
  if (servers.length > 1) {
    if (values.responsiveness) throw new UserError("--responsiveness applies to a run against one server; drop it or pass one HOST", 2);
  }
  if (values.reverse && values.bidir) throw new UserError("-R and --bidir both given: pass one", 2);
  if ((values.reverse || values.bidir) && plan.test !== "stream") throw new UserError(`${values.reverse ? "-R" : "--bidir"} applies to bulk tests: drop it for --rr/--crr (the server answers every transaction anyway)`, 2);
  const target: ClientTarget = {
    host,
    port,
    token: resolveToken({ flag: "--token", value: values.token, file: values["token-file"], envName: "ANYPERF_TOKEN", env: process.env }),
    direction: values.bidir ? "bidir" : values.reverse ? "reverse" : "forward",
    linkSpeedBps: values["link-speed"] === undefined ? undefined : parseLinkSpeed(values["link-speed"]),
    lengthGiven: values.length !== undefined,
  };
  if (values.paused && values["start-at"] !== undefined) throw new UserError("--paused and --start-at both given: pass one", 2);
  const startAtMs = values["start-at"] === undefined ? undefined : parseStartAt(values["start-at"], Date.now());
  const targets = servers.map((s) => ({ ...target, host: s.host, port: s.port }));
  const portsGiven = servers.map((s) => values.port !== undefined || splitHostPort(s.text).port !== undefined);
  const portGiven = servers.length === 1 && portsGiven[0]!;
  return { plan, target, targets, portGiven, portsGiven, tokenGiven: values.token !== undefined || values["token-file"] !== undefined, json: values.json ?? false, csv: values.csv, push: values.push, pushgateway: values.pushgateway, help, startAtMs, paused: values.paused ?? false, responsiveness: responsive };
}

/** A run over many servers ends with the diagnosis of this host, the tested one (diagnose-run.ts). */
async function withTestedHostDiagnosis(r: Results, plan: Plan, targets: readonly ClientTarget[]): Promise<Results> {
  const targetBps = plan.bitsPerSecond * plan.streams * targets.length;
  const diagnosis = await diagnoseTestedHost(r, { servers: targets.map((t) => t.host), localSends: targets[0]!.direction !== "reverse", linkSpeedBps: targets[0]!.linkSpeedBps, targetBps });
  return { ...r, ...(targetBps > 0 ? { target_bps: targetBps } : {}), ...(diagnosis ? { diagnosis } : {}) };
}

/** How a run reaches its server: the native protocol, or (from a front end that knows the peers) a stock tool's. */
export type ClientDriver = (plan: Plan, target: ClientTarget, hooks: Parameters<typeof runNativeClient>[2]) => Promise<Results>;
/** How a run reaches many servers: anyperf serves only, or (from a front end that knows the peers) stock ones too. */
export type ManyDriver = (plan: Plan, targets: readonly ClientTarget[], hooks: Parameters<typeof runNativeClient>[2]) => Promise<Results>;

export async function clientMain(argv: string[], hooks: { onRun?: (run: TestRun) => void } = {}, drive: ClientDriver = runNativeClient, driveMany: ManyDriver = runMultiHostClient): Promise<number> {
  const proc = takeProcedureOptions(argv);
  const opts = parseClientArgs(proc.rest);
  if (opts.help) {
    console.log(CLIENT_USAGE);
    return 0;
  }
  const signal = shutdownSignal();
  if (opts.paused) {
    if (!startRouteEnabled()) throw new UserError("--paused without --http: add --http [ADDR:]PORT so POST /start can reach this client", 2);
    console.error("paused: POST /start on the status endpoint starts the test");
    if (!(await waitForStart(signal))) return interruptedExitCode(signal) ?? 130;
  }
  if (opts.startAtMs !== undefined) {
    console.error(`waiting until ${new Date(opts.startAtMs).toISOString()} (${Math.max(0, (opts.startAtMs - Date.now()) / 1000).toFixed(1)} s)`);
    if (!(await waitUntil(opts.startAtMs, signal))) return interruptedExitCode(signal) ?? 130;
  }
  if (opts.responsiveness) return responsivenessMain(proc, opts, signal, (a) => parseClientArgs(a).plan, hooks.onRun);
  const prepare = (a: string[]) => {
    const { plan, target, targets } = parseClientArgs(a);
    return (h: Parameters<typeof runNativeClient>[2]) => (targets.length > 1 ? driveMany(plan, targets, h).then((r) => withTestedHostDiagnosis(r, plan, targets)) : drive(plan, target, h));
  };
  return runProcedure(proc, { mode: "client", peer: opts.targets.map((t) => t.host).join(","), out: opts, prepare }, hooks.onRun);
}
