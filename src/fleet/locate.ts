import { lookup } from "node:dns/promises";
import { parseArgs } from "node:util";
import { z } from "zod";
import { UserError } from "../errors.ts";
import { resolveToken } from "../access/secret.ts";

/**
 * `anyperf locate SERVICE NODE`: the address of the `anyperf serve` that runs on NODE, among every address SERVICE's
 * name resolves to (a headless Service lists each serve pod). Each serve is asked who it is on its status endpoint
 * (/status `labels.node`, the Downward API's NODE_NAME), so a fleet plan names nodes and survives a rollout, where a
 * pod IP written into the plan would not.
 */

export const LOCATE_USAGE = `usage: anyperf locate SERVICE NODE [options]
Prints the address of the anyperf serve on node NODE among the addresses SERVICE resolves to (a headless Service).
  --port PORT        the serves' status port (--http; default 9100)
  --token-file FILE  the status token (default: ANYPERF_HTTP_TOKEN, else ANYPERF_TOKEN)
  each serve is asked GET /status; its labels.node (--label node=..., or NODE_NAME in a pod) names its node`;

const DEFAULT_PORT = 9100;
const ASK_DEADLINE_MS = 3000;
/** More addresses than any fleet of nodes has: a name that resolves wider is not a headless Service of serves. */
const MAX_ADDRESSES = 5000;

const Who = z.object({ labels: z.record(z.string(), z.string()) });

export interface LocateOptions {
  service: string;
  node: string;
  port: number;
  token?: string;
  resolve?: (name: string) => Promise<string[]>;
}

async function resolveAll(name: string): Promise<string[]> {
  return (await lookup(name, { all: true })).map((a) => a.address);
}

/** The node a serve at `address` says it runs on, or why it could not be asked. */
async function askNode(address: string, port: number, token: string | undefined): Promise<{ node?: string; why?: string }> {
  const host = address.includes(":") ? `[${address}]` : address;
  try {
    const res = await fetch(`http://${host}:${port}/status`, {
      headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(ASK_DEADLINE_MS),
    });
    if (!res.ok) return { why: `HTTP ${res.status}${res.status === 401 ? " (pass the status token)" : ""}` };
    const who = Who.safeParse(await res.json());
    if (!who.success) return { why: "not an anyperf status document" };
    const node = who.data.labels.node;
    return node === undefined ? { why: "no node label" } : { node };
  } catch (e) {
    return { why: (e as Error).message };
  }
}

export async function locate(o: LocateOptions): Promise<string> {
  let addresses: string[];
  try {
    addresses = [...new Set(await (o.resolve ?? resolveAll)(o.service))].sort();
  } catch (e) {
    throw new UserError(`locate: cannot resolve ${o.service}: ${(e as Error).message}; pass the headless Service's name (anyperf.anyperf.svc)`, 1);
  }
  if (addresses.length === 0) throw new UserError(`locate: ${o.service} resolves to no address; are the serve pods ready?`, 1);
  if (addresses.length > MAX_ADDRESSES) throw new UserError(`locate: ${o.service} resolves to ${addresses.length} addresses, more than ${MAX_ADDRESSES}: pass the serves' headless Service`, 1);
  const answers = await Promise.all(addresses.map(async (address) => ({ address, ...(await askNode(address, o.port, o.token)) })));
  const found = answers.find((a) => a.node === o.node);
  if (found) return found.address;
  const seen = answers.map((a) => (a.node === undefined ? `${a.address}: ${a.why}` : `${a.address} on ${a.node}`));
  throw new UserError(`locate: no serve of ${o.service} runs on node ${o.node} (${seen.join("; ")}); check the node name and that its serve pod is ready`, 1);
}

export async function locateMain(argv: string[], env: Record<string, string | undefined> = process.env): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: true,
    options: { port: { type: "string" }, "token-file": { type: "string" }, help: { type: "boolean", short: "h" } },
  });
  if (values.help) {
    console.log(LOCATE_USAGE);
    return 0;
  }
  const [service, node, ...extra] = positionals;
  if (service === undefined || node === undefined || extra.length) throw new UserError(`locate takes SERVICE and NODE: anyperf locate anyperf.anyperf.svc node-b`, 2);
  const port = values.port === undefined ? DEFAULT_PORT : Number(values.port);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new UserError(`--port ${values.port}: pass the status port, 1-65535`, 2);
  const token =
    resolveToken({ flag: "--token", file: values["token-file"], envName: "ANYPERF_HTTP_TOKEN", env }) ??
    resolveToken({ flag: "--token", envName: "ANYPERF_TOKEN", env });
  console.log(await locate({ service, node, port, token }));
  return 0;
}
