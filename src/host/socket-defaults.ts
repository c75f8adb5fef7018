import { readFileSync } from "node:fs";
import { linuxSocketBufferBytes } from "../formulas.ts";

/**
 * The socket buffer sizes a fresh socket gets, as the peers print them (iperf 2's "TCP window size: ... (default)",
 * netperf's socket size columns). The peers read them back with getsockopt on their own socket; before any socket
 * exists we read the kernel's defaults, which is what such a socket reports on Linux. Elsewhere the Linux defaults
 * stand in.
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
  udpSend: () => procNumber("/proc/sys/net/core/wmem_default", 0, 212992),
};

/**
 * What the socket reports after a set size (iperf 2's -w, netperf's -s/-S) when read back: SO_SNDBUF or SO_RCVBUF,
 * capped at net.core.wmem_max/rmem_max and doubled by Linux.
 */
export const setBuffers = {
  send: (requested: number) => linuxSocketBufferBytes(requested, procNumber("/proc/sys/net/core/wmem_max", 0, 212992)),
  recv: (requested: number) => linuxSocketBufferBytes(requested, procNumber("/proc/sys/net/core/rmem_max", 0, 212992)),
};
