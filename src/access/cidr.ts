import { UserError } from "../errors.ts";
import type { Cidr } from "./cidr-schema.ts";

/**
 * IPv4 and IPv6 networks (CIDR) and plain addresses, for the servers' `--allow` list. Addresses are compared as
 * bytes; an IPv4-mapped IPv6 address (::ffff:127.0.0.1, what a dual-stack listener reports for an IPv4 peer) is
 * read as the IPv4 address it carries, so `--allow 127.0.0.0/8` covers it.
 */

export type { Cidr };

function parseV4(text: string): Uint8Array | undefined {
  const parts = text.split(".");
  if (parts.length !== 4) return undefined;
  const out = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const p = parts[i]!;
    // Leading zeros are refused: inet_aton would read "010" as octal, a silent surprise in an allow-list.
    if (!/^(0|[1-9]\d{0,2})$/.test(p) || Number(p) > 255) return undefined;
    out[i] = Number(p);
  }
  return out;
}

function parseV6(text: string): Uint8Array | undefined {
  let t = text;
  // An embedded IPv4 tail (::ffff:1.2.3.4) stands for the last two groups: rewrite it as them.
  const lastColon = t.lastIndexOf(":");
  if (t.includes(".")) {
    const v4 = parseV4(t.slice(lastColon + 1));
    if (!v4) return undefined;
    const hex = (a: number, b: number) => ((a << 8) | b).toString(16);
    t = `${t.slice(0, lastColon + 1)}${hex(v4[0]!, v4[1]!)}:${hex(v4[2]!, v4[3]!)}`;
  }
  const halves = t.split("::");
  if (halves.length > 2) return undefined;
  const groups = (s: string) => (s === "" ? [] : s.split(":"));
  const head = groups(halves[0]!);
  const rest = halves.length === 2 ? groups(halves[1]!) : [];
  if (![...head, ...rest].every((g) => /^[0-9a-fA-F]{1,4}$/.test(g))) return undefined;
  const known = head.length + rest.length;
  if (halves.length === 1 ? known !== 8 : known > 7) return undefined;
  const words = [...head, ...Array<string>(8 - known).fill("0"), ...rest].map((g) => parseInt(g, 16));
  const out = new Uint8Array(16);
  words.forEach((w, i) => {
    out[2 * i] = w >> 8;
    out[2 * i + 1] = w & 0xff;
  });
  return out;
}

const MAPPED_PREFIX = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff];

function unmap(bytes: Uint8Array): Uint8Array {
  if (bytes.length === 16 && MAPPED_PREFIX.every((b, i) => bytes[i] === b)) return bytes.slice(12);
  return bytes;
}

/**
 * An address as a peer's socket reports it ("127.0.0.1", "::1", "::ffff:10.1.2.3", "fe80::1%eth0", "[::1]"), as
 * 4 or 16 bytes; IPv4-mapped addresses come back as their 4 IPv4 bytes. undefined for anything else.
 */
export function parseAddress(text: string): Uint8Array | undefined {
  const t = text.trim().replace(/^\[(.*)\]$/, "$1").replace(/%.*$/, "");
  if (t.includes(":")) {
    const v6 = parseV6(t);
    return v6 && unmap(v6);
  }
  return parseV4(t);
}

function clearHostBits(bytes: Uint8Array, prefix: number): Uint8Array<ArrayBuffer> {
  const out = bytes.slice();
  for (let i = 0; i < out.length; i++) {
    const keep = Math.max(0, Math.min(8, prefix - 8 * i));
    out[i]! &= keep === 0 ? 0 : (0xff << (8 - keep)) & 0xff;
  }
  return out;
}

/** Why `text` is not a network, or the network. */
export function tryParseCidr(text: string): { ok: true; cidr: Cidr } | { ok: false; reason: string } {
  const t = text.trim();
  if (t === "") return { ok: false, reason: "it is empty" };
  const slash = t.indexOf("/");
  const addrText = slash < 0 ? t : t.slice(0, slash);
  const raw = addrText.includes(":") ? parseV6(addrText.replace(/^\[(.*)\]$/, "$1")) : parseV4(addrText);
  if (!raw) return { ok: false, reason: `'${addrText}' is not an IPv4 or IPv6 address` };
  const max = raw.length * 8;
  let prefix = max;
  if (slash >= 0) {
    const p = t.slice(slash + 1);
    if (!/^\d{1,3}$/.test(p) || Number(p) > max) return { ok: false, reason: `prefix must be 0-${max}` };
    prefix = Number(p);
  }
  // ::ffff:10.0.0.0/104 is the IPv4 network 10.0.0.0/8; matching compares it with unmapped IPv4 peers.
  let bytes = raw;
  if (raw.length === 16 && prefix >= 96 && unmap(raw).length === 4) {
    bytes = unmap(raw);
    prefix -= 96;
  }
  // Checked by the schema where it goes into a plan (server policy, StreamSpec.allow), not here: Workers load this.
  return { ok: true, cidr: { family: bytes.length === 4 ? 4 : 6, bytes: clearHostBits(bytes, prefix), prefix, text: t } };
}

/** One entry of an allow-list; `option` names the flag in the error ("--allow: '10.0.0.0/33' is not a CIDR: ..."). */
export function parseCidr(text: string, option = "--allow"): Cidr {
  const r = tryParseCidr(text);
  if (!r.ok) throw new UserError(`${option}: '${text.trim()}' is not a CIDR: ${r.reason}; write e.g. 10.0.0.0/8, 192.168.1.7 or fd00::/8`, 2);
  return r.cidr;
}

/** "10.0.0.0/8,::1" (commas and/or spaces) -> networks; an empty list is an error, not "allow nobody". */
export function parseCidrList(text: string, option = "--allow"): Cidr[] {
  const items = text.split(/[\s,]+/).filter((s) => s !== "");
  if (items.length === 0) throw new UserError(`${option} needs at least one network: e.g. ${option} 10.0.0.0/8,127.0.0.1`, 2);
  return items.map((s) => parseCidr(s, option));
}

export function cidrContains(net: Cidr, address: Uint8Array): boolean {
  if (address.length !== net.bytes.length) return false;
  const masked = clearHostBits(address, net.prefix);
  return masked.every((b, i) => b === net.bytes[i]);
}

/** True when the peer's address (as its socket reports it) lies in one of the networks. */
export function addressAllowed(list: readonly Cidr[], address: string): boolean {
  const bytes = parseAddress(address);
  return bytes !== undefined && list.some((n) => cidrContains(n, bytes));
}
