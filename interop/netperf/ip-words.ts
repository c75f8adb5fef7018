/**
 * Addresses in the DO_OMNI request occupy four 32-bit words that go through the word swap. netperf stores an IPv4
 * address as a host-order integer in word 0 (network order on the wire), but copies an IPv6 address into the words
 * as raw memory, so between little-endian hosts every 4-byte group travels byte-reversed
 * (docs/protocols/netperf.md §2.4).
 */

const ZERO_V4 = "0.0.0.0";
const ZERO_V6 = "::";

export function isIpv6Text(address: string): boolean {
  return address.includes(":");
}

export function decodeAddressWords(bytes: Uint8Array, offset: number, ipv6: boolean): string {
  if (!ipv6) return Array.from(bytes.subarray(offset, offset + 4)).join(".");
  const raw = new Uint8Array(16);
  for (let g = 0; g < 4; g++) for (let i = 0; i < 4; i++) raw[g * 4 + i] = bytes[offset + g * 4 + 3 - i]!;
  return formatIpv6(raw);
}

export function encodeAddressWords(bytes: Uint8Array, offset: number, address: string): void {
  bytes.fill(0, offset, offset + 16);
  if (address === "") return;
  if (!isIpv6Text(address)) {
    const v4 = parseIpv4(address);
    if (!v4) throw new Error(`not an IPv4 address: ${address}`);
    bytes.set(v4, offset);
    return;
  }
  const raw = parseIpv6(address);
  if (!raw) throw new Error(`not an IPv6 address: ${address}`);
  for (let g = 0; g < 4; g++) for (let i = 0; i < 4; i++) bytes[offset + g * 4 + 3 - i] = raw[g * 4 + i]!;
}

export function isUnspecified(address: string): boolean {
  return address === "" || address === ZERO_V4 || address === ZERO_V6 || /^[0:]+$/.test(address);
}

export function parseIpv4(text: string): Uint8Array | undefined {
  const parts = text.split(".");
  if (parts.length !== 4) return undefined;
  const out = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const p = parts[i]!;
    if (!/^\d{1,3}$/.test(p) || Number(p) > 255) return undefined;
    out[i] = Number(p);
  }
  return out;
}

export function parseIpv6(text: string): Uint8Array | undefined {
  let s = text;
  const zone = s.indexOf("%");
  if (zone >= 0) s = s.slice(0, zone);
  let tail: Uint8Array | undefined;
  const lastColon = s.lastIndexOf(":");
  if (s.includes(".", lastColon)) {
    tail = parseIpv4(s.slice(lastColon + 1));
    if (!tail) return undefined;
    s = `${s.slice(0, lastColon + 1)}0:0`;
  }
  const halves = s.split("::");
  if (halves.length > 2) return undefined;
  const groups = (h: string): number[] | undefined => {
    if (h === "") return [];
    const out: number[] = [];
    for (const g of h.split(":")) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return undefined;
      out.push(parseInt(g, 16));
    }
    return out;
  };
  const head = groups(halves[0]!);
  const rest = halves.length === 2 ? groups(halves[1]!) : [];
  if (!head || !rest) return undefined;
  const missing = 8 - head.length - rest.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const all = [...head, ...new Array<number>(halves.length === 2 ? missing : 0).fill(0), ...rest];
  const out = new Uint8Array(16);
  all.forEach((g, i) => {
    out[i * 2] = g >> 8;
    out[i * 2 + 1] = g & 0xff;
  });
  if (tail) out.set(tail, 12);
  return out;
}

/** RFC 5952 text: lower case, the longest run of two or more zero groups compressed. */
export function formatIpv6(raw: Uint8Array): string {
  const groups: number[] = [];
  for (let i = 0; i < 8; i++) groups.push((raw[i * 2]! << 8) | raw[i * 2 + 1]!);
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen && j - i >= 2) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = (a: number[]) => a.map((g) => g.toString(16)).join(":");
  if (bestStart < 0) return hex(groups);
  return `${hex(groups.slice(0, bestStart))}::${hex(groups.slice(bestStart + bestLen))}`;
}
