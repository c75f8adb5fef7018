import { readFileSync } from "node:fs";

/**
 * The socket buffer sizes a fresh socket gets, for the banners' "TCP window size: ... (default)" lines. iperf 2 reads
 * them back with getsockopt on its own socket; before any socket exists we read the kernel's defaults, which is what
 * such a socket reports on Linux. Elsewhere the Linux defaults stand in.
 */
function procNumber(path: string, field: number, fallback: number): number {
  try {
    const v = Number(readFileSync(path, "utf8").trim().split(/\s+/)[field]);
    return Number.isFinite(v) && v > 0 ? v : fallback;
  } catch {
    return fallback;
  }
}

export const defaultBuffers = {
  tcpSend: () => procNumber("/proc/sys/net/ipv4/tcp_wmem", 1, 16384),
  tcpRecv: () => procNumber("/proc/sys/net/ipv4/tcp_rmem", 1, 131072),
  udp: () => procNumber("/proc/sys/net/core/rmem_default", 0, 212992),
};
