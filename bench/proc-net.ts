/**
 * Ports in LISTEN state, from the text of /proc/net/tcp or /proc/net/tcp6. The bench waits for a server this way
 * because a probe connection would be taken for a client by iperf3 -s -1 (and end its one test).
 */
export function listeningPorts(text: string): Set<number> {
  const ports = new Set<number>();
  for (const line of text.split("\n").slice(1)) {
    const f = line.trim().split(/\s+/);
    const local = f[1], state = f[3];
    if (!local || state !== "0A") continue;
    const hex = local.slice(local.lastIndexOf(":") + 1);
    const port = Number.parseInt(hex, 16);
    if (Number.isInteger(port)) ports.add(port);
  }
  return ports;
}
