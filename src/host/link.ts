import { existsSync, readFileSync } from "node:fs";
import { isIPv4, isIPv6 } from "node:net";
import { endianness } from "node:os";
import { UserError } from "../errors.ts";
import { parseRate } from "../units.ts";
import type { LinkFacts } from "./link-facts.ts";

/*
 * The link that carries traffic to a peer, read from this network namespace's /proc/net and /sys/class/net (no
 * `ip`, no netlink). A shaper (tc tbf, htb) is a qdisc, visible only over netlink: its rate cannot be read here,
 * so the user names it with --link-speed, which wins over the interface's own speed.
 */

const RTF_UP = 0x0001;
const RTF_REJECT = 0x0200;
const RTF_LOCAL = 0x80000000;
/** /sys/class/net/<if>/type of a loopback device (ARPHRD_LOOPBACK). */
const ARPHRD_LOOPBACK = 772;

export interface Route {
  /** Destination and mask as big-endian bits: 32 for IPv4, 128 for IPv6. */
  destination: bigint;
  prefix: number;
  metric: number;
  flags: number;
  interface: string;
}

/** /proc/net/route prints each address as the host-order u32 of network-order bytes. */
function ipv4Hex(hex: string, littleEndian: boolean): bigint | undefined {
  if (!/^[0-9A-Fa-f]{8}$/.test(hex)) return undefined;
  const v = parseInt(hex, 16) >>> 0;
  const be = littleEndian ? ((v & 0xff) << 24) | ((v & 0xff00) << 8) | ((v >>> 8) & 0xff00) | (v >>> 24) : v;
  return BigInt(be >>> 0);
}

function prefixOfMask(mask: bigint, bits: number): number | undefined {
  let n = 0;
  while (n < bits && (mask >> BigInt(bits - 1 - n)) & 1n) n++;
  const contiguous = n === bits ? mask === (1n << BigInt(bits)) - 1n : (mask & ((1n << BigInt(bits - n)) - 1n)) === 0n;
  return contiguous ? n : undefined;
}

/** Parses /proc/net/route (IPv4 main table; local addresses are not in it). */
export function parseIpv4Routes(text: string, littleEndian = endianness() === "LE"): Route[] {
  const out: Route[] = [];
  for (const line of text.split("\n").slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length < 8) continue;
    const destination = ipv4Hex(f[1]!, littleEndian);
    const mask = ipv4Hex(f[7]!, littleEndian);
    const flags = parseInt(f[3]!, 16);
    const metric = Number(f[6]);
    const prefix = mask === undefined ? undefined : prefixOfMask(mask, 32);
    if (destination === undefined || prefix === undefined || !Number.isFinite(flags) || !Number.isFinite(metric)) continue;
    out.push({ destination, prefix, metric, flags, interface: f[0]! });
  }
  return out;
}

/** Parses /proc/net/ipv6_route: dest, prefix, src, src prefix, next hop, metric, refcnt, use, flags, device (hex). */
export function parseIpv6Routes(text: string): Route[] {
  const out: Route[] = [];
  for (const line of text.split("\n")) {
    const f = line.trim().split(/\s+/);
    if (f.length < 10 || !/^[0-9a-f]{32}$/i.test(f[0]!)) continue;
    const prefix = parseInt(f[1]!, 16);
    const metric = parseInt(f[5]!, 16);
    const flags = parseInt(f[8]!, 16);
    if (!(prefix >= 0 && prefix <= 128) || !Number.isFinite(metric) || !Number.isFinite(flags)) continue;
    out.push({ destination: BigInt(`0x${f[0]}`), prefix, metric, flags, interface: f[9]! });
  }
  return out;
}

/** The IPv4 addresses of this host: leaves marked `/32 host LOCAL` in /proc/net/fib_trie. */
export function parseLocalIpv4(fibTrie: string): Set<string> {
  const out = new Set<string>();
  let leaf: string | undefined;
  for (const line of fibTrie.split("\n")) {
    const m = /\|-- (\d+\.\d+\.\d+\.\d+)\s*$/.exec(line);
    if (m) leaf = m[1];
    else if (leaf !== undefined && /^\s*\/32 host LOCAL/.test(line)) out.add(leaf);
  }
  return out;
}

function ipv4Bits(address: string): bigint {
  return address.split(".").reduce((acc, part) => (acc << 8n) | BigInt(Number(part)), 0n);
}

function ipv6Bits(address: string): bigint {
  const [head, tail] = address.split("::") as [string, string | undefined];
  const groups = (s: string | undefined): string[] => {
    if (!s) return [];
    const parts = s.split(":");
    const last = parts[parts.length - 1]!;
    if (last.includes(".")) {
      const v4 = ipv4Bits(last);
      parts.splice(parts.length - 1, 1, (v4 >> 16n).toString(16), (v4 & 0xffffn).toString(16));
    }
    return parts;
  };
  const h = groups(head);
  const t = groups(tail);
  const all = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill("0"), ...t];
  return all.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g, 16)), 0n);
}

/** Longest matching prefix, then lowest metric; reject routes (unreachable, prohibit) answer "no route". */
function bestRoute(routes: readonly Route[], address: bigint, bits: number): Route | undefined {
  let best: Route | undefined;
  for (const r of routes) {
    if (!(r.flags & RTF_UP)) continue;
    const shift = BigInt(bits - r.prefix);
    if (r.destination >> shift !== address >> shift) continue;
    if (!best || r.prefix > best.prefix || (r.prefix === best.prefix && r.metric < best.metric)) best = r;
  }
  return best && !(best.flags & RTF_REJECT) ? best : undefined;
}

export interface RouteTables {
  route?: string;
  ipv6Route?: string;
  fibTrie?: string;
}

/**
 * The interface traffic to `peer` (an IP address) leaves by, or undefined without a route. Loopback addresses and
 * this host's own addresses go over "lo", as the kernel routes them.
 */
export function routeInterface(peer: string, tables: RouteTables): string | undefined {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(peer)?.[1];
  const v4 = mapped ?? (isIPv4(peer) ? peer : undefined);
  if (v4 !== undefined) {
    if (v4.startsWith("127.") || (tables.fibTrie !== undefined && parseLocalIpv4(tables.fibTrie).has(v4))) return "lo";
    return tables.route === undefined ? undefined : bestRoute(parseIpv4Routes(tables.route), ipv4Bits(v4), 32)?.interface;
  }
  if (!isIPv6(peer) || tables.ipv6Route === undefined) return undefined;
  const r = bestRoute(parseIpv6Routes(tables.ipv6Route), ipv6Bits(peer.replace(/%.*$/, "")), 128);
  // The local table lists this host's own addresses against their device, flagged RTF_LOCAL.
  return r && r.flags & RTF_LOCAL ? "lo" : r?.interface;
}

/** /sys/class/net/<if>/speed (Mb/s) in bits/s; undefined for -1, 0, garbage or a missing file. */
export function parseSysfsSpeed(text: string | undefined): number | undefined {
  const mbps = Number(text?.trim());
  return text !== undefined && text.trim() !== "" && Number.isInteger(mbps) && mbps > 0 ? mbps * 1e6 : undefined;
}

/** --link-speed RATE (bits/s, SI suffixes: 1G, 2.5g, 100M): the speed of a shaped or virtual link. */
export function parseLinkSpeed(text: string): number {
  const bps = parseRate(text, { option: "--link-speed", pps: false }).bitsPerSecond ?? 0;
  if (!(bps > 0)) {
    throw new UserError(`--link-speed "${text}" is not a link speed: pass the link's rate in bits/s, e.g. 1G or 10G`, 2);
  }
  return bps;
}

/** A small /proc or /sys file's text, or undefined when it is absent or unreadable. */
export function readIfPresent(path: string): string | undefined {
  try {
    return readFileSync(path, "latin1");
  } catch {
    return undefined;
  }
}

export interface ReadLinkOptions {
  /** bits/s from --link-speed. */
  override?: number;
  /** Roots of /proc and /sys, for tests. */
  proc?: string;
  sys?: string;
}

/** What this host knows about the link to `peer` (an IP address). */
export function readLink(peer: string, options: ReadLinkOptions = {}): LinkFacts {
  const proc = options.proc ?? "/proc";
  const sys = options.sys ?? "/sys";
  const name = routeInterface(peer, {
    route: readIfPresent(`${proc}/net/route`),
    ipv6Route: readIfPresent(`${proc}/net/ipv6_route`),
    fibTrie: readIfPresent(`${proc}/net/fib_trie`),
  });
  const facts: LinkFacts = {};
  if (name !== undefined) facts.interface = name;
  const dir = name === undefined ? undefined : `${sys}/class/net/${name}`;
  const mtu = Number(dir === undefined ? undefined : readIfPresent(`${dir}/mtu`)?.trim());
  if (Number.isInteger(mtu) && mtu > 0) facts.mtu = mtu;
  if (options.override !== undefined) {
    facts.speed_bps = options.override;
    facts.speed_source = "--link-speed";
    return facts;
  }
  if (dir === undefined) {
    facts.note = `no route to ${peer} found: pass --link-speed`;
    return facts;
  }
  if (name === "lo" || Number(readIfPresent(`${dir}/type`)?.trim()) === ARPHRD_LOOPBACK) {
    facts.note = "loopback: no link speed";
    return facts;
  }
  const speed = parseSysfsSpeed(readIfPresent(`${dir}/speed`));
  // A device without a `device` link is virtual (veth, bridge, tun): the speed it reports is nominal, not a limit.
  if (!existsSync(`${dir}/device`)) facts.note = `${name} is virtual${speed === undefined ? "" : ` (reports a nominal ${speed / 1e6} Mb/s)`}: pass --link-speed`;
  else if (speed === undefined) facts.note = `${name} reports no speed: pass --link-speed`;
  else {
    facts.speed_bps = speed;
    facts.speed_source = "sysfs";
  }
  return facts;
}
