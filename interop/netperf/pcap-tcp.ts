/**
 * Reads TCP conversations out of a classic pcap file (Ethernet or Linux cooked link layer, IPv4/IPv6), so tests
 * can replay the stock tools' control connections byte for byte. Segments are placed by sequence number, so
 * retransmissions and duplicates do not corrupt the streams.
 */
import { concatBytes } from "../../lib/bytes.ts";

export interface TcpSegment {
  fromClient: boolean;
  timeUs: number;
  bytes: Uint8Array;
}

export interface TcpConversation {
  client: { address: string; port: number };
  server: { address: string; port: number };
  /** Payload segments in capture order (with retransmitted bytes trimmed). */
  segments: TcpSegment[];
  toServer: Uint8Array;
  toClient: Uint8Array;
}

interface Packet {
  timeUs: number;
  src: string;
  dst: string;
  sport: number;
  dport: number;
  seq: number;
  syn: boolean;
  ack: boolean;
  payload: Uint8Array;
}

const LINKTYPE_ETHERNET = 1;
const LINKTYPE_LINUX_SLL = 113;

export function readPcapTcp(file: Uint8Array): TcpConversation[] {
  const dv = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const magic = dv.getUint32(0, true);
  const formats: Record<number, { le: boolean; nanos: boolean }> = {
    0xa1b2c3d4: { le: true, nanos: false },
    0xd4c3b2a1: { le: false, nanos: false },
    0xa1b23c4d: { le: true, nanos: true },
    0x4d3cb2a1: { le: false, nanos: true },
  };
  const format = formats[magic];
  if (!format) throw new Error("not a classic pcap file");
  const { le, nanos } = format;
  const linkType = dv.getUint32(20, le);
  const packets: Packet[] = [];
  for (let at = 24; at + 16 <= file.length; ) {
    const sec = dv.getUint32(at, le);
    const frac = dv.getUint32(at + 4, le);
    const incl = dv.getUint32(at + 8, le);
    const data = file.subarray(at + 16, at + 16 + incl);
    at += 16 + incl;
    const p = parseFrame(data, linkType);
    if (p) packets.push({ ...p, timeUs: sec * 1e6 + (nanos ? Math.floor(frac / 1000) : frac) });
  }
  return groupConversations(packets);
}

function parseFrame(frame: Uint8Array, linkType: number): Omit<Packet, "timeUs"> | undefined {
  let off: number;
  let etherType: number;
  if (linkType === LINKTYPE_ETHERNET) {
    off = 14;
    etherType = (frame[12]! << 8) | frame[13]!;
  } else if (linkType === LINKTYPE_LINUX_SLL) {
    off = 16;
    etherType = (frame[14]! << 8) | frame[15]!;
  } else {
    throw new Error(`unsupported pcap link type ${linkType}`);
  }
  let src: string;
  let dst: string;
  let proto: number;
  let l4: number;
  let l4End: number;
  if (etherType === 0x0800) {
    const ihl = (frame[off]! & 0x0f) * 4;
    const total = (frame[off + 2]! << 8) | frame[off + 3]!;
    proto = frame[off + 9]!;
    src = Array.from(frame.subarray(off + 12, off + 16)).join(".");
    dst = Array.from(frame.subarray(off + 16, off + 20)).join(".");
    l4 = off + ihl;
    l4End = off + total;
  } else if (etherType === 0x86dd) {
    const payloadLen = (frame[off + 4]! << 8) | frame[off + 5]!;
    proto = frame[off + 6]!;
    src = hex16(frame.subarray(off + 8, off + 24));
    dst = hex16(frame.subarray(off + 24, off + 40));
    l4 = off + 40;
    l4End = l4 + payloadLen;
  } else {
    return undefined;
  }
  if (proto !== 6) return undefined;
  const t = frame.subarray(l4, Math.min(l4End, frame.length));
  const dv = new DataView(t.buffer, t.byteOffset, t.byteLength);
  const dataOff = (t[12]! >> 4) * 4;
  const flags = t[13]!;
  return {
    src,
    dst,
    sport: dv.getUint16(0),
    dport: dv.getUint16(2),
    seq: dv.getUint32(4),
    syn: (flags & 0x02) !== 0,
    ack: (flags & 0x10) !== 0,
    payload: t.subarray(dataOff),
  };
}

function hex16(b: Uint8Array): string {
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((b[i]! << 8) | b[i + 1]!).toString(16));
  return groups.join(":");
}

function groupConversations(packets: Packet[]): TcpConversation[] {
  const byKey = new Map<string, { conv: TcpConversation; next: [number, number]; up: Uint8Array[]; down: Uint8Array[] }>();
  const order: string[] = [];
  const keyOf = (a: string, ap: number, b: string, bp: number) => `${a}|${ap}|${b}|${bp}`;
  for (const p of packets) {
    let entry = byKey.get(keyOf(p.src, p.sport, p.dst, p.dport));
    let fromClient = true;
    if (!entry) {
      entry = byKey.get(keyOf(p.dst, p.dport, p.src, p.sport));
      fromClient = false;
    }
    if (!entry) {
      // The SYN sender is the client; without a SYN in the capture, the first sender is.
      const asClient = !(p.syn && p.ack);
      const client = asClient ? { address: p.src, port: p.sport } : { address: p.dst, port: p.dport };
      const server = asClient ? { address: p.dst, port: p.dport } : { address: p.src, port: p.sport };
      const key = keyOf(client.address, client.port, server.address, server.port);
      entry = {
        conv: { client, server, segments: [], toServer: new Uint8Array(0), toClient: new Uint8Array(0) },
        next: [-1, -1],
        up: [],
        down: [],
      };
      byKey.set(key, entry);
      order.push(key);
      fromClient = asClient;
    }
    const dir = fromClient ? 0 : 1;
    if (p.syn) {
      entry.next[dir] = (p.seq + 1) >>> 0;
      continue;
    }
    if (p.payload.length === 0) continue;
    if (entry.next[dir] === -1) entry.next[dir] = p.seq;
    // Trim bytes already seen (retransmission), relative to the expected sequence number.
    const skip = (entry.next[dir]! - p.seq) | 0;
    if (skip >= p.payload.length) continue;
    const fresh = p.payload.subarray(Math.max(0, skip));
    entry.next[dir] = (entry.next[dir]! + fresh.length) >>> 0;
    entry.conv.segments.push({ fromClient, timeUs: p.timeUs, bytes: fresh });
    (fromClient ? entry.up : entry.down).push(fresh);
  }
  return order.map((k) => {
    const e = byKey.get(k)!;
    return { ...e.conv, toServer: concatBytes(e.up), toClient: concatBytes(e.down) };
  });
}
