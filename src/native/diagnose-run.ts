import { isIP } from "node:net";
import { lookup } from "node:dns/promises";
import { diagnose } from "../diagnosis/diagnose.ts";
import { diagnosisInput } from "../diagnosis/from-results.ts";
import type { Diagnosis } from "../diagnosis/schema.ts";
import { readLink } from "../host/link.ts";
import type { LinkFacts } from "../host/link-facts.ts";
import { readShaper, shapedLink } from "../host/shaper.ts";
import { readTcpBufferCeilings, streamWindowBytes } from "../host/link-buffers.ts";
import type { Results } from "../report/result.ts";

/** The link this host routes to the server by (its name resolved first), with --link-speed when given. */
export async function routeToServer(server: string, linkSpeedBps?: number): Promise<LinkFacts> {
  const address = isIP(server) === 0 ? await lookup(server).then((a) => a.address, () => server) : server;
  return readLink(address, { override: linkSpeedBps });
}

/**
 * The diagnosis of a finished two-host run: both ends' windows, the link to the server as this host routes to it,
 * and the window one stream could reach. The sending end's TCP figures (RTT, retransmits) are the ones that count,
 * so with -R they are the server's.
 */
export async function diagnoseRun(r: Results, opts: { server: string; localSends: boolean; linkSpeedBps?: number; targetBps?: number }): Promise<Diagnosis | undefined> {
  const remote = r.remote;
  if (!remote) return undefined;
  const route = await routeToServer(opts.server, opts.linkSpeedBps);
  const link = shapedLink(route, await readShaper(route.interface));
  const ours = readTcpBufferCeilings();
  // With -w both ends set the buffer the user asked for, each capped by its own *_set_max ceiling.
  const windowBytes = r.transport === "tcp" ? streamWindowBytes(opts.localSends ? ours : remote.tcp_buffers, opts.localSends ? remote.tcp_buffers : ours, r.socket_buffers?.requested_bytes) : undefined;
  const view: Results = opts.localSends ? r : { ...r, sender: remote.sender, retransmits: remote.retransmits };
  return diagnose(diagnosisInput({ local: view, remoteHost: remote.cpu.host, remotePath: remote.tcp_path, localSends: opts.localSends, link, windowBytes, targetBps: opts.targetBps }));
}

/**
 * The diagnosis of the tested host in a run over many servers (`anyperf client H1 H2 ...`): the whole run's figures
 * against this host's link to the servers (as it routes to the first: the guide's helpers share its NIC), this
 * host's CPU, and its own sending sockets' TCP_INFO when it sends. The far end is the busiest server that reported
 * its host (the one whose core came nearest to full): a helper that could not keep up is the limit the verdict
 * names; stock servers report no host of theirs.
 */
export async function diagnoseTestedHost(r: Results, opts: { servers: readonly string[]; localSends: boolean; linkSpeedBps?: number; targetBps?: number }): Promise<Diagnosis | undefined> {
  if (!r.hosts?.some((h) => h.summary)) return undefined;
  const route = await routeToServer(opts.servers[0]!, opts.linkSpeedBps);
  const link = shapedLink(route, await readShaper(route.interface));
  const busiest = (h: NonNullable<Results["hosts"]>[number]) => Math.max(0, ...(h.remote?.cpu.host?.perCpu ?? []).map((c) => c.busy ?? 0));
  const far = r.hosts.filter((h) => h.remote?.cpu.host).sort((a, b) => busiest(b) - busiest(a))[0]?.remote;
  const view: Results = opts.localSends ? r : { ...r, sender: undefined, retransmits: r.hosts.reduce((a, h) => a + (h.remote?.retransmits ?? 0), 0) };
  return diagnose(diagnosisInput({ local: view, remoteHost: far?.cpu.host, localSends: opts.localSends, link, targetBps: opts.targetBps }));
}
