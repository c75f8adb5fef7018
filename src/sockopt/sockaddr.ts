import { AF_INET, AF_INET6 } from "./constants.ts";

/*
 * sockaddr_in / sockaddr_in6 as Linux lays them out: family in host byte order (every target we build is
 * little-endian), port in network order, scope id in host order.
 */

export type SocketFamily = "ipv4" | "ipv6";

export function parseIPv4(text: string): Uint8Array | undefined {
  const parts = text.split(".");
  if (parts.length !== 4) return undefined;
  const out = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const p = parts[i] as string;
    if (!/^(0|[1-9]\d{0,2})$/.test(p) || Number(p) > 255) return undefined;
    out[i] = Number(p);
  }
  return out;
}

/** An IPv6 literal without zone ("::1", "fe80::1", "::ffff:127.0.0.1"); undefined if it is not one. */
export function parseIPv6(text: string): Uint8Array | undefined {
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const groups = (s: string): number[] | undefined => {
    if (s === "") return [];
    const out: number[] = [];
    const parts = s.split(":");
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i] as string;
      if (i === parts.length - 1 && p.includes(".")) {
        const v4 = parseIPv4(p);
        if (!v4) return undefined;
        out.push(((v4[0] as number) << 8) | (v4[1] as number), ((v4[2] as number) << 8) | (v4[3] as number));
      } else if (/^[0-9A-Fa-f]{1,4}$/.test(p)) out.push(parseInt(p, 16));
      else return undefined;
    }
    return out;
  };
  const head = groups(halves[0] as string);
  const tail = halves.length === 2 ? groups(halves[1] as string) : [];
  if (!head || !tail) return undefined;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined;
  const all = [...head, ...new Array<number>(missing).fill(0), ...tail];
  const out = new Uint8Array(16);
  all.forEach((g, i) => {
    out[2 * i] = g >> 8;
    out[2 * i + 1] = g & 0xff;
  });
  return out;
}

/** The family an IP literal belongs to; undefined for names (resolve them first) and garbage. */
export function familyOf(host: string): SocketFamily | undefined {
  if (parseIPv4(host)) return "ipv4";
  const [addr = "", zone] = host.split("%");
  if (parseIPv6(addr) && (zone === undefined || /^\d+$/.test(zone))) return "ipv6";
  return undefined;
}

/**
 * Encodes host:port for a socket of `family`. An IPv4 host on an IPv6 socket becomes ::ffff:a.b.c.d (dual stack);
 * a numeric zone ("fe80::1%2") becomes the scope id. Throws on names and on IPv6 hosts for IPv4 sockets.
 */
export function encodeSockaddr(family: SocketFamily, host: string, port: number): Uint8Array {
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new RangeError(`port ${port} out of range`);
  const v4 = parseIPv4(host);
  if (family === "ipv4") {
    if (!v4) throw new TypeError(`"${host}" is not an IPv4 address`);
    const b = new Uint8Array(16);
    const dv = new DataView(b.buffer);
    dv.setUint16(0, AF_INET, true);
    dv.setUint16(2, port, false);
    b.set(v4, 4);
    return b;
  }
  const [addr = "", zone] = host.split("%");
  let ip: Uint8Array | undefined;
  if (v4) {
    ip = new Uint8Array(16);
    ip[10] = 0xff;
    ip[11] = 0xff;
    ip.set(v4, 12);
  } else ip = parseIPv6(addr);
  if (!ip || (zone !== undefined && !/^\d+$/.test(zone))) throw new TypeError(`"${host}" is not an IP address`);
  const b = new Uint8Array(28);
  const dv = new DataView(b.buffer);
  dv.setUint16(0, AF_INET6, true);
  dv.setUint16(2, port, false);
  b.set(ip, 8);
  dv.setUint32(24, zone === undefined ? 0 : Number(zone), true);
  return b;
}

function formatIPv6(ip: Uint8Array): string {
  const g: number[] = [];
  for (let i = 0; i < 8; i++) g.push(((ip[2 * i] as number) << 8) | (ip[2 * i + 1] as number));
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) return `::ffff:${Array.from(ip.subarray(12)).join(".")}`;
  // RFC 5952: compress the longest run (first if tied) of two or more zero groups.
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (g[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && g[j] === 0) j++;
    if (j - i > bestLen) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = (xs: number[]) => xs.map((x) => x.toString(16)).join(":");
  if (best < 0) return hex(g);
  return `${hex(g.slice(0, best))}::${hex(g.slice(best + bestLen))}`;
}

/** Decodes a sockaddr_in or sockaddr_in6 (as getsockname fills it); undefined for other families. */
export function decodeSockaddr(b: Uint8Array): { family: SocketFamily; host: string; port: number } | undefined {
  if (b.length < 4) return undefined;
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const af = dv.getUint16(0, true);
  const port = dv.getUint16(2, false);
  if (af === AF_INET && b.length >= 8) return { family: "ipv4", host: Array.from(b.subarray(4, 8)).join("."), port };
  if (af === AF_INET6 && b.length >= 24) {
    const scope = b.length >= 28 ? dv.getUint32(24, true) : 0;
    const host = formatIPv6(b.subarray(8, 24));
    return { family: "ipv6", host: scope ? `${host}%${scope}` : host, port };
  }
  return undefined;
}
