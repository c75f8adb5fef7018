import { netlinkExchange } from "../sockopt/netlink.ts";
import { readIfPresent } from "./link.ts";
import type { LinkFacts } from "./link-facts.ts";
import { encodeTcDump, rootQdisc, RTM_GETQDISC, RTM_GETTCLASS, shapedRate, TcDumpReader, type TcEntry } from "./rtnetlink.ts";

/** A shaping qdisc on an interface (tbf, htb) and the rate it holds traffic to, bits/s. */
export interface Shaper {
  interface: string;
  kind: string;
  rate_bps: number;
  /** Bytes in its queue when read. */
  backlog_bytes?: number;
}

let seq = 1;

async function dump(type: typeof RTM_GETQDISC | typeof RTM_GETTCLASS, ifindex: number): Promise<TcEntry[] | undefined> {
  const s = seq++;
  const reader = new TcDumpReader(s);
  const reads = await netlinkExchange(encodeTcDump(type, s, ifindex), reader);
  return reads && reader.error === undefined ? reader.entries : undefined;
}

/**
 * The shaper on `iface`, read from the kernel over rtnetlink (this network namespace's); undefined when there is
 * none, or it cannot be read (no libc through bun:ffi, no sysfs ifindex).
 */
export async function readShaper(iface: string | undefined): Promise<Shaper | undefined> {
  if (iface === undefined || iface === "lo" || !/^[\w.:@-]+$/.test(iface)) return undefined;
  const ifindex = Number(readIfPresent(`/sys/class/net/${iface}/ifindex`)?.trim());
  if (!Number.isInteger(ifindex) || ifindex <= 0) return undefined;
  const qdiscs = await dump(RTM_GETQDISC, ifindex);
  if (!qdiscs) return undefined;
  const classes = qdiscs.some((q) => q.ifindex === ifindex && q.kind === "htb") ? ((await dump(RTM_GETTCLASS, ifindex)) ?? []) : [];
  const shaped = shapedRate(ifindex, qdiscs, classes);
  const backlog = rootQdisc(ifindex, qdiscs)?.backlog_bytes;
  return shaped && { interface: iface, ...shaped, ...(backlog === undefined ? {} : { backlog_bytes: backlog }) };
}

/**
 * The link facts with the interface's shaper: its rate is the link's speed when nothing slower is known (a veth's
 * nominal speed is none, a NIC's may be faster); --link-speed still wins, with the shaper only named beside it.
 */
export function shapedLink(link: LinkFacts, shaper: Shaper | undefined): LinkFacts {
  if (!shaper) return link;
  const out: LinkFacts = { ...link, shaper: { kind: shaper.kind, rate_bps: shaper.rate_bps } };
  if (link.speed_source === "--link-speed" || (link.speed_bps !== undefined && link.speed_bps <= shaper.rate_bps)) return out;
  out.speed_bps = shaper.rate_bps;
  out.speed_source = "qdisc";
  delete out.note;
  return out;
}
