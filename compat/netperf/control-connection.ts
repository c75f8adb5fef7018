import { lookup } from "node:dns/promises";
import type { TcpSocket } from "../../src/net/types.ts";
import { flushQueued, newQueued, type Queued } from "../../src/net/write-queue.ts";
import { Interrupted, unlessAborted } from "../../src/signals.ts";
import { loadSockopt } from "../../src/sockopt/sockopt.ts";
import { connectTcp } from "../../src/worker/sockets.ts";
import type { ClientIo } from "./client.ts";
import type { NetperfPlan } from "./plan.ts";

/**
 * The control connection every netperf test opens, omni's session and the classic request/reply tests alike: the
 * names resolved as netperf resolves them, one connect path, and what netperf prints when either fails.
 */

function familyOf(address: string): "ipv4" | "ipv6" {
  return address.includes(":") ? "ipv6" : "ipv4";
}

/** getaddrinfo's return codes and gai_strerror texts, as netperf prints them when a name does not resolve. */
const GAI: Record<string, [number, string]> = {
  EAI_AGAIN: [-3, "Temporary failure in name resolution"],
  EAI_FAIL: [-4, "Non-recoverable failure in name resolution"],
  EAI_NODATA: [-5, "No address associated with hostname"],
};

/** The address, or what netperf prints on standard output when it cannot resolve the host. */
export async function resolve(host: string, family: "any" | "ipv4" | "ipv6"): Promise<{ ip: string } | { failure: string }> {
  try {
    const r = await lookup(host, { family: family === "ipv4" ? 4 : family === "ipv6" ? 6 : 0 });
    return { ip: r.address };
  } catch (e) {
    const [code, text] = GAI[(e as { code?: string }).code ?? ""] ?? [-2, "Name or service not known"];
    const af = family === "ipv4" ? "AF_INET" : family === "ipv6" ? "AF_INET6" : "AF_UNSPEC";
    return {
      failure:
        `resolve_host: could not resolve host '${host}' port '(null)' af ${af}\n` +
        `\tgetaddrinfo returned ${code} ${text}\n` +
        `Netperf could not resolve ${host} as a host name\n`,
    };
  }
}

/** What netperf prints on standard output when the control connection fails. */
export function establishFailure(host: string, ip: string, port: number): string {
  const fam = familyOf(ip) === "ipv6" ? "AF_INET6" : "AF_INET";
  return (
    `establish control: are you sure there is a netserver listening on ${host} at port ${port}?\n` +
    `establish_control could not establish the control connection from 0.0.0.0 port 0 address family AF_UNSPEC to ${ip} port ${port} address family ${fam}\n`
  );
}

export function dataFamilyOf(plan: NetperfPlan, controlIp: string): "ipv4" | "ipv6" {
  if (plan.dataFamily !== "any") return plan.dataFamily;
  if (plan.remoteDataAddress) return familyOf(plan.remoteDataAddress);
  return familyOf(controlIp);
}

export interface ResolvedTest {
  /** The plan with the test-specific -H and -L names as addresses (the requests carry addresses, not names). */
  plan: NetperfPlan;
  /** The control host, resolved. */
  ip: string;
  dataFamily: "ipv4" | "ipv6";
}

/** The control host and, as netperf does, the test-specific -H and -L names; or what netperf prints for a name. */
export async function resolveTest(plan: NetperfPlan): Promise<ResolvedTest | { failure: string }> {
  const r = await resolve(plan.host, plan.family);
  if ("failure" in r) return r;
  const resolved = { ...plan };
  for (const key of ["remoteDataAddress", "localDataAddress"] as const) {
    const name = plan[key];
    if (name === undefined) continue;
    const d = await resolve(name, plan.dataFamily);
    if ("failure" in d) return d;
    resolved[key] = d.ip;
  }
  return { plan: resolved, ip: r.ip, dataFamily: dataFamilyOf(resolved, r.ip) };
}

export type ControlSocket = TcpSocket<Queued>;

/** What the control connection hands its user: the bytes as they come, and its end (by either side). */
export interface ControlHandlers {
  data(bytes: Uint8Array): void;
  closed(): void;
}

/**
 * Connects to the netserver (through Sockopt where there is one, so a failure names its real errno: Bun says
 * ECONNREFUSED for all); or, printed as netperf prints it, why not, with the exit status to end with. Writes queue
 * behind the socket's buffer (flushQueued on drain).
 */
export async function connectControl(
  io: ClientIo,
  plan: Pick<NetperfPlan, "host" | "controlPort">,
  ip: string,
  handlers: ControlHandlers,
  print: { out(text: string): void; err(text: string): void },
): Promise<ControlSocket | number> {
  try {
    const env = { net: io.net, sockopt: await loadSockopt() };
    const connecting = connectTcp<Queued>(env, { host: ip, port: plan.controlPort }, undefined, {}, newQueued(), {
      data: (_s, d) => handlers.data(d),
      drain: (s) => flushQueued(s),
      end: () => handlers.closed(),
      close: () => handlers.closed(),
      error: () => {},
    });
    return await unlessAborted(connecting, io.signal, (s) => s.terminate());
  } catch (e) {
    if (e instanceof Interrupted) {
      print.err(`netperf: interrupted while connecting to ${plan.host} port ${plan.controlPort}\n`);
      return 1;
    }
    print.out(establishFailure(plan.host, ip, plan.controlPort));
    return 255;
  }
}
