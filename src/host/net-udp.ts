/** One socket row of /proc/net/udp or /proc/net/udp6. */
export interface UdpSocketRow {
  /** Local address as the kernel prints it: hex, in the kernel's in-memory byte order. */
  localAddressHex: string;
  localPort: number;
  /** Bytes queued for reading (rx_queue). */
  rxQueue: number;
  inode: number;
  /** Datagrams the kernel dropped for this socket (full receive buffer, bad checksum, filters). */
  drops: number;
}

/** Parses /proc/net/udp or /proc/net/udp6 (same columns; only the address width differs). */
export function parseNetUdp(text: string): UdpSocketRow[] {
  const out: UdpSocketRow[] = [];
  for (const line of text.split("\n")) {
    const f = line.trim().split(/\s+/);
    // sl local rem st tx:rx tr:when retrnsmt uid timeout inode ref pointer drops
    if (f.length < 13 || !/^\d+:$/.test(f[0] as string)) continue;
    const [addr = "", port = ""] = (f[1] as string).split(":");
    const rxQueue = parseInt((f[4] as string).split(":")[1] ?? "", 16);
    const inode = Number(f[9]);
    const drops = Number(f[12]);
    if (!/^[0-9A-Fa-f]+$/.test(port) || !Number.isFinite(rxQueue) || !Number.isFinite(drops)) continue;
    out.push({ localAddressHex: addr, localPort: parseInt(port, 16), rxQueue, inode, drops });
  }
  return out;
}

/** Drops summed over every socket bound to `port` (v4 and v6 rows, reuseport groups); undefined if none is. */
export function udpDropsForPort(rows: readonly UdpSocketRow[], port: number): number | undefined {
  let sum: number | undefined;
  for (const r of rows) if (r.localPort === port) sum = (sum ?? 0) + r.drops;
  return sum;
}
