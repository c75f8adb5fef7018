/**
 * The kernel's own view of a process's TCP sockets (`ss -tnieOmp --tos`, read over inet_diag), for tests that check
 * a socket option was applied by reading it back rather than trusting an exit code.
 */
export interface SsSocket {
  local: string;
  peer: string;
  pid: number;
  /** IP_TOS, and IPV6_TCLASS where the socket is IPv6. */
  tos: number;
  tclass: number | undefined;
  /** SO_SNDBUF / SO_RCVBUF as the kernel holds them (doubled from what was asked). */
  sndbuf: number;
  rcvbuf: number;
  mss: number;
  /** The MSS this end advertised in its SYN or SYN-ACK (TCP_MAXSEG on the socket, or the listener it came from). */
  advmss: number;
  /** SO_MAX_PACING_RATE in bytes/s (ss prints bits/s); undefined when unlimited. */
  maxPacing: number | undefined;
  bytes: number;
  /** The keepalive timer runs (SO_KEEPALIVE), and its seconds to the next probe. */
  keepaliveS: number | undefined;
}

const num = (line: string, re: RegExp): number | undefined => {
  const m = re.exec(line);
  return m ? Number(m[1]) : undefined;
};

/** Seconds to the next keepalive probe ("19sec", "1min3sec", "800ms"); undefined when no keepalive timer runs. */
function keepalive(line: string): number | undefined {
  const m = /timer:\(keepalive,(?:(\d+)min)?(?:(\d+)(?:\.\d+)?sec)?(?:(\d+)ms)?,/.exec(line);
  return m ? Number(m[1] ?? 0) * 60 + Number(m[2] ?? 0) : undefined;
}

export function parseSs(text: string): SsSocket[] {
  const out: SsSocket[] = [];
  for (const line of text.split("\n")) {
    const m = /^\d+\s+\d+\s+(\S+)\s+(\S+)\s+users:\(\("[^"]*",pid=(\d+)/.exec(line);
    if (!m) continue;
    const pacing = /pacing_rate \d+bps\/(\d+)bps/.exec(line);
    out.push({
      local: m[1]!,
      peer: m[2]!,
      pid: Number(m[3]),
      tos: num(line, / tos:(0x[0-9a-f]+|0)\b/) ?? 0,
      tclass: num(line, / tclass:(0x[0-9a-f]+|0)\b/),
      sndbuf: num(line, /,tb(\d+),/) ?? 0,
      rcvbuf: num(line, /,rb(\d+),/) ?? 0,
      mss: num(line, / mss:(\d+)/) ?? 0,
      advmss: num(line, / advmss:(\d+)/) ?? 0,
      maxPacing: pacing ? Number(pacing[1]) / 8 : undefined,
      keepaliveS: keepalive(line),
      bytes: Math.max(num(line, /bytes_acked:(\d+)/) ?? 0, num(line, /bytes_received:(\d+)/) ?? 0),
    });
  }
  return out;
}

/** `pid`'s established TCP sockets with `port` at either end. */
export function ssSockets(pid: number, port: number): SsSocket[] {
  const r = Bun.spawnSync(["ss", "-tnieOmp", "--tos", "state", "established", `( sport = :${port} or dport = :${port} )`], { stdout: "pipe", stderr: "pipe" });
  return parseSs(r.stdout.toString()).filter((s) => s.pid === pid);
}

/**
 * Polls until `pid` has a socket on `port` that moved more than `minBytes` (a data connection, not the control one)
 * and, with `settled`, until those sockets satisfy it: the kernel may take a client's bytes before the server's event
 * loop has read the header that asks for an option. Returns the last sockets seen when `ms` runs out.
 */
export async function dataSockets(pid: number, port: number, minBytes = 200_000, ms = 20_000, settled?: (found: SsSocket[]) => boolean): Promise<SsSocket[]> {
  const until = Date.now() + ms;
  let last: SsSocket[] = [];
  for (;;) {
    const found = ssSockets(pid, port).filter((s) => s.bytes > minBytes);
    if (found.length > 0) last = found;
    if ((found.length > 0 && (settled?.(found) ?? true)) || Date.now() > until) return last;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** `pid`'s UDP sockets bound to `port` (`ss -uanp --tos`): where each is bound and its IP_TOS. */
export function udpSockets(pid: number, port: number): { local: string; tos: number }[] {
  const r = Bun.spawnSync(["ss", "-uanpH", "--tos", `( sport = :${port} )`], { stdout: "pipe", stderr: "pipe" });
  return r.stdout
    .toString()
    .split("\n")
    .flatMap((line) => {
      const m = /^\S+\s+\d+\s+\d+\s+(\S+)\s+\S+\s+users:\(\("[^"]*",pid=(\d+)/.exec(line);
      return m && Number(m[2]) === pid ? [{ local: m[1]!, tos: num(line, / tos:(0x[0-9a-f]+|0)\b/) ?? 0 }] : [];
    });
}
