/**
 * `anyperf serve`: every dialect's server in one process, each on its peer's default port, so any stock client (and
 * anyperf client) finds this host without asking which server runs. Each server is the dialect's own, embedded
 * (compat/<proto>/embedded.ts): one busy dialect never blocks another, and each refuses by the same --allow/--max-*.
 */
import { WorkerPool } from "../../src/engine/worker-pool.ts";
import { UserError, explainSocketError } from "../../src/errors.ts";
import { serverPolicy } from "../../src/access/server-policy.ts";
import { loadNet } from "../../src/net/net.ts";
import { PortMux } from "../../src/net/port-mux.ts";
import type { EmbedOptions, ServerHandle } from "../../src/net/server-handle.ts";
import { interruptedExitCode, shutdownSignal } from "../../src/signals.ts";
import { WINDOWS_TOKEN_PORT_OFFSET } from "../../interop/ntttcp/windows-token.ts";
import { SERVE_PORTS } from "../ntttcp/serve-receiver.ts";
import { NATIVE_DEFAULT_PORT } from "../../src/native/server.ts";
import { DIALECTS, SERVE_USAGE, parseServeArgs, type ServePlan } from "./args.ts";
import { lineSink } from "./line-sink.ts";
import { markReady } from "../../src/status/readiness.ts";
import { decide5001, type SharedRoute } from "./share-5001.ts";
import { closeWithin } from "./close-within.ts";

interface Listener {
  who: string;
  flag: string;
  port: number;
  /** What the listener line adds after the address. */
  note?: string;
  /** How to get past a port in use, when not "pass FLAG PORT or FLAG off". */
  fix?: string;
  start(o: EmbedOptions): Promise<ServerHandle>;
}

export async function serveMain(argv: string[]): Promise<number> {
  // Tests move Windows' token ports into their own port range, as `anyperf ntttcp` lets them.
  const offset = process.env.ANYPERF_NTTTCP_TOKEN_OFFSET;
  if (offset !== undefined && !/^\d{1,4}$/.test(offset)) throw new UserError(`ANYPERF_NTTTCP_TOKEN_OFFSET=${offset}: set a port offset 0-9999, or unset it`, 2);
  const tokenOffset = offset !== undefined ? Number(offset) : WINDOWS_TOKEN_PORT_OFFSET;
  const cmd = parseServeArgs(argv, NATIVE_DEFAULT_PORT, tokenOffset);
  if (cmd.kind === "help") {
    console.log(SERVE_USAGE(NATIVE_DEFAULT_PORT));
    return 0;
  }
  const plan = cmd.plan;
  const signal = shutdownSignal();
  // Data Workers take a moment to load: start them now, not under the first client's clock.
  WorkerPool.shared();
  const handles: { who: string; handle: ServerHandle }[] = [];
  let mux: PortMux<SharedRoute> | undefined;
  const closeAll = async () => {
    await Promise.all(handles.map(({ who, handle }) => closeWithin(who, handle)));
    mux?.stop();
  };
  try {
    if (plan.iperf !== null && plan.iperf === plan.ntttcp) {
      mux = new PortMux<SharedRoute>(await loadNet(), decide5001);
      const m = mux;
      // Both families, as the servers behind it listen (an iperf 2 -V client, an IPv6 ntttcp sender).
      const host = plan.bind ?? "::";
      const fix = `pass ${DIALECTS.iperf.flag} PORT and ${DIALECTS.ntttcp.flag} PORT, or off`;
      bindOrExplain({ who: "iperf, ntttcp", flag: DIALECTS.iperf.flag, fix, port: plan.iperf }, host, () => m.listen(host, plan.iperf!));
    }
    for (const l of listeners(plan, tokenOffset, mux)) {
      const where = `${plan.bind && plan.bind.includes(":") ? `[${plan.bind}]` : (plan.bind ?? "")}:${l.port}`;
      const sink = lineSink(l.who);
      const handle = await startOrExplain(l, { host: plan.bind, port: l.port, policy: serverPolicy(), sink: sink.write });
      handles.push({ who: l.who, handle });
      sink.open();
      console.log(`${l.who} on ${where}${l.note ? ` (${l.note})` : ""}`);
    }
  } catch (e) {
    await closeAll();
    throw e;
  }
  markReady();
  await new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    signal.addEventListener("abort", () => resolve(), { once: true });
  });
  await closeAll();
  return interruptedExitCode(signal) ?? 0;
}

function listeners(plan: ServePlan, tokenOffset: number, mux: PortMux<SharedRoute> | undefined): Listener[] {
  const out: Listener[] = [
    {
      who: "anyperf",
      flag: "-p",
      fix: "pass -p PORT",
      port: plan.port,
      note: plan.token === undefined ? undefined : "clients need --token",
      start: async (o) => (await import("../../src/native/server.ts")).startNativeServer({ host: o.host, port: o.port, token: plan.token, policy: o.policy, log: (line) => o.sink(`${line}\n`) }),
    },
  ];
  if (plan.iperf3 !== null) {
    out.push({ who: "iperf3", flag: DIALECTS.iperf3.flag, port: plan.iperf3, note: plan.iperf3Auth && "clients log in (--authorized-users-path)", start: async (o) => (await import("../iperf3/embedded.ts")).startIperf3Server(o, plan.iperf3Auth) });
  }
  if (plan.iperf !== null) {
    const shared = mux !== undefined;
    out.push({
      who: "iperf",
      flag: DIALECTS.iperf.flag,
      port: plan.iperf,
      note: shared ? "TCP shared with ntttcp, and UDP" : "TCP and UDP",
      start: async (o) => (await import("../iperf2/embedded.ts")).startIperf2Server({ ...o, tcpNet: mux?.net("iperf") }),
    });
  }
  if (plan.netserver !== null) {
    out.push({ who: "netserver", flag: DIALECTS.netserver.flag, port: plan.netserver, start: async (o) => (await import("../netperf/embedded.ts")).startNetserver(o) });
  }
  const b = plan.ntttcp;
  if (b !== null) {
    out.push({
      who: "ntttcp",
      flag: DIALECTS.ntttcp.flag,
      port: b,
      note: `data ${b}-${b + SERVE_PORTS - 1}, Linux sync ${b - 1}, Windows sync ${b + tokenOffset}-${b + tokenOffset + SERVE_PORTS - 1}; TCP`,
      start: async (o) =>
        (await import("../ntttcp/serve-receiver.ts")).startNtttcpServer({
          ...o,
          tokenOffset,
          baseNet: mux?.net("ntttcp"),
        }),
    });
  }
  return out;
}

/** A port in use names the flag that moves it or turns it off. */
function inUse(e: unknown, l: Pick<Listener, "who" | "flag" | "port" | "fix">): unknown {
  if (!(e instanceof UserError) || e.code !== "EADDRINUSE") return e;
  const port = Number(/^port (\d+)/.exec(e.message)?.[1] ?? l.port);
  return new UserError(`port ${port} in use (${l.who}): ${l.fix ?? `pass ${l.flag} PORT or ${l.flag} off`}`, 1, e.code);
}

async function startOrExplain(l: Listener, o: EmbedOptions): Promise<ServerHandle> {
  try {
    return await l.start(o);
  } catch (e) {
    throw inUse(e, l);
  }
}

function bindOrExplain(l: Pick<Listener, "who" | "flag" | "port" | "fix">, host: string, bind: () => void): void {
  try {
    bind();
  } catch (e) {
    throw inUse(explainSocketError(e, { host, port: l.port, role: "listen" }), l);
  }
}
