import { parseArgs } from "node:util";
import { z } from "zod";
import { UserError } from "../../src/errors.ts";
import { optionError } from "../../src/option-error.ts";
import { negativeValues, valuedFlags } from "../../src/negative-values.ts";
import { resolveToken } from "../../src/access/secret.ts";
import { SERVE_PORTS } from "../ntttcp/serve-receiver.ts";
import { serverAuth } from "../iperf3/auth-files.ts";
import { ServerPlan as Iperf3ServerPlan } from "../iperf3/plan.ts";

/** The servers `anyperf serve` runs, each on its peer's own default port (ntttcp's: its base data port). */
export const DIALECTS = {
  iperf3: { flag: "--iperf3", port: 5201 },
  iperf: { flag: "--iperf", port: 5001 },
  netserver: { flag: "--netserver", port: 12865 },
  ntttcp: { flag: "--ntttcp", port: 5001 },
} as const;
export type Dialect = keyof typeof DIALECTS;

const Port = z.int().min(1).max(65535);

export const ServePlan = z.object({
  /** Native `anyperf client` port (-p). */
  port: Port,
  /** A dialect's port, or null when turned off. */
  iperf3: Port.nullable(),
  iperf: Port.nullable(),
  netserver: Port.nullable(),
  ntttcp: Port.nullable(),
  /** -B: one address every listener binds; undefined = each dialect's wildcard. */
  bind: z.string().min(1).optional(),
  /** --token / --token-file: the secret a native client must present. */
  token: z.string().min(1).optional(),
  /** --rsa-private-key-path and --authorized-users-path: the iperf3 listener admits only the file's users. */
  iperf3Auth: Iperf3ServerPlan.shape.auth,
});
export type ServePlan = z.infer<typeof ServePlan>;

export const SERVE_USAGE = (nativePort: number) => `usage: anyperf serve [options]
One process that answers stock iperf3, iperf 2, netperf and ntttcp (Linux and Windows) clients and anyperf client.
  -p, --port PORT          anyperf client's port (default ${nativePort})
      --iperf3 PORT|off    iperf3 -c (default ${DIALECTS.iperf3.port})
      --iperf PORT|off     iperf -c, TCP and UDP (default ${DIALECTS.iperf.port})
      --netserver PORT|off netperf (default ${DIALECTS.netserver.port})
      --ntttcp PORT|off    ntttcp senders, base data port (default ${DIALECTS.ntttcp.port}; Linux sync on PORT-1,
                           Windows sync tokens on PORT+1000...; data ports PORT...PORT+15; TCP only)
  -B, --bind ADDR          bind every listener to ADDR (default: all addresses)
      --token T            anyperf clients must pass --token T
      --token-file F       the same, read from the first line of F (or set ANYPERF_TOKEN)
      --rsa-private-key-path F, --authorized-users-path F [--time-skew-threshold S] [--use-pkcs1-padding]
                           iperf3 clients must log in, as with iperf3 -s (3.17+ OAEP padding; PKCS1 for 3.12-3.16)
  iperf 2 and ntttcp share port 5001: a connection goes to the one whose client it is, told by what it sends first
  (an iperf 2 header, or ntttcp's 'A' bytes); UDP on that port is iperf 2's.
  every server option also applies: --allow, --max-tests, --max-streams, --max-duration, --max-rate, --http`;

const SERVE_OPTIONS = {
  port: { type: "string", short: "p" },
  iperf3: { type: "string" },
  iperf: { type: "string" },
  netserver: { type: "string" },
  ntttcp: { type: "string" },
  bind: { type: "string", short: "B" },
  token: { type: "string" },
  "token-file": { type: "string" },
  "rsa-private-key-path": { type: "string" },
  "authorized-users-path": { type: "string" },
  "time-skew-threshold": { type: "string" },
  "use-pkcs1-padding": { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

/** The flag of each plan field, for optionError. */
const SERVE_FLAGS = { port: "--port", iperf3: "--iperf3", iperf: "--iperf", netserver: "--netserver", ntttcp: "--ntttcp", bind: "--bind", token: "--token" } as const;

function portOrOff(flag: string, text: string | undefined, fallback: number): number | null {
  if (text === undefined) return fallback;
  if (text === "off") return null;
  if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > 65535) throw new UserError(`${flag} ${text}: pass a port 1-65535 or off`, 2);
  return Number(text);
}

/** iperf3 -s's own checks of its login options, with serve's exit code for a usage error. */
function iperf3Auth(values: Parameters<typeof serverAuth>[0]): ServePlan["iperf3Auth"] {
  try {
    return serverAuth(values);
  } catch (e) {
    if (e instanceof UserError) throw new UserError(e.message.replace(/^parameter error - /, ""), 2);
    throw e;
  }
}

export type ServeCommand = { kind: "help" } | { kind: "run"; plan: ServePlan };

/** `tokenOffset`: Windows sync token ports sit this far above the data ports (1000; tests move it). */
export function parseServeArgs(argv: string[], nativePort: number, tokenOffset: number): ServeCommand {
  const { values } = parseArgs({ args: negativeValues(argv, valuedFlags(SERVE_OPTIONS)), strict: true, allowPositionals: false, options: SERVE_OPTIONS });
  if (values.help) return { kind: "help" };
  const port = portOrOff("--port", values.port, nativePort);
  if (port === null) throw new UserError("-p off: anyperf client's port cannot be turned off; pass a port 1-65535", 2);
  const input = {
    port,
    iperf3: portOrOff("--iperf3", values.iperf3, DIALECTS.iperf3.port),
    iperf: portOrOff("--iperf", values.iperf, DIALECTS.iperf.port),
    netserver: portOrOff("--netserver", values.netserver, DIALECTS.netserver.port),
    ntttcp: portOrOff("--ntttcp", values.ntttcp, DIALECTS.ntttcp.port),
    bind: values.bind,
    token: resolveToken({ flag: "--token", value: values.token, file: values["token-file"], envName: "ANYPERF_TOKEN", env: process.env }),
    iperf3Auth: iperf3Auth(values),
  };
  if (input.iperf3Auth !== undefined && input.iperf3 === null) {
    throw new UserError("--rsa-private-key-path and --authorized-users-path are the iperf3 listener's, which --iperf3 off turns off: drop one or the other", 2);
  }
  const parsed = ServePlan.safeParse(input);
  if (!parsed.success) throw optionError(parsed.error, SERVE_FLAGS, { input }) ?? parsed.error;
  const plan = parsed.data;
  const b = plan.ntttcp;
  if (b !== null && (b < 2 || b + SERVE_PORTS - 1 + tokenOffset > 65535)) {
    throw new UserError(`--ntttcp ${b}: ntttcp also listens on PORT-1 and PORT+${SERVE_PORTS - 1 + tokenOffset}; pass a port 2-${65536 - SERVE_PORTS - tokenOffset}`, 2);
  }
  assertNoClash(tcpPorts(plan, tokenOffset));
  return { kind: "run", plan };
}

/** TCP ports each listener binds: ntttcp's whole range (sync, data, tokens); iperf and ntttcp share their base. */
function tcpPorts(plan: ServePlan, tokenOffset: number): { who: string; flag: string; ports: number[] }[] {
  const out: { who: string; flag: string; ports: number[] }[] = [{ who: "anyperf", flag: "-p", ports: [plan.port] }];
  for (const d of ["iperf3", "iperf", "netserver"] as const) {
    const p = plan[d];
    if (p !== null) out.push({ who: d, flag: DIALECTS[d].flag, ports: [p] });
  }
  const b = plan.ntttcp;
  if (b !== null) {
    const data = Array.from({ length: SERVE_PORTS }, (_, i) => b + i);
    // The base port is shared with iperf 2 on purpose (told apart by the port mux).
    const own = [b - 1, ...data.slice(plan.iperf === b ? 1 : 0), ...data.map((p) => p + tokenOffset)];
    out.push({ who: "ntttcp", flag: DIALECTS.ntttcp.flag, ports: own });
  }
  return out;
}

/** Two listeners on one port (other than iperf and ntttcp's base) is a usage error naming both flags. */
function assertNoClash(groups: { who: string; flag: string; ports: number[] }[]): void {
  const owner = new Map<number, { who: string; flag: string }>();
  for (const g of groups) {
    for (const p of g.ports) {
      const o = owner.get(p);
      if (o && o.who !== g.who) throw new UserError(`port ${p} is asked for by ${o.who} (${o.flag}) and ${g.who} (${g.flag}): pass another port to one of them`, 2);
      owner.set(p, g);
    }
  }
}
