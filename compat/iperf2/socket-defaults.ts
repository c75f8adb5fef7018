import { readFileSync } from "node:fs";
import { linuxSocketBufferBytes } from "../../src/formulas.ts";

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

/**
 * What the socket reports after -w, as iperf 2 reads it back for the banner: a client's SO_SNDBUF, a server's
 * SO_RCVBUF (the one it sets), capped at net.core.wmem_max/rmem_max and doubled by Linux.
 */
export const setBuffers = {
  send: (requested: number) => linuxSocketBufferBytes(requested, procNumber("/proc/sys/net/core/wmem_max", 0, 212992)),
  recv: (requested: number) => linuxSocketBufferBytes(requested, procNumber("/proc/sys/net/core/rmem_max", 0, 212992)),
};
