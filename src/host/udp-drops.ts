import { ProcFile } from "./proc-file.ts";
import { parseNetUdp, udpDropsForPort } from "./net-udp.ts";

/** Reads the kernel's per-socket UDP drop counter for a local port, from /proc/net/udp and /proc/net/udp6. */
export interface UdpDropsReader {
  /** Drops summed over the sockets bound to `port`; undefined when no socket is bound there or /proc is unreadable. */
  drops(port: number): number | undefined;
  close(): void;
}

/** undefined where neither /proc/net/udp nor /proc/net/udp6 can be opened (not Linux). */
export function createUdpDropsReader(): UdpDropsReader | undefined {
  const files = ["/proc/net/udp", "/proc/net/udp6"].map((p) => ProcFile.open(p)).filter((f) => f !== undefined);
  if (files.length === 0) return undefined;
  return {
    drops(port) {
      let sum: number | undefined;
      for (const f of files) {
        const text = f.read();
        if (text === undefined) continue;
        const d = udpDropsForPort(parseNetUdp(text), port);
        if (d !== undefined) sum = (sum ?? 0) + d;
      }
      return sum;
    },
    close() {
      for (const f of files) f.close();
    },
  };
}
