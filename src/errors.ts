/** An error the user can act on: printed as one line (cause and fix), never with a stack trace. */
export class UserError extends Error {
  constructor(message: string, readonly exitCode = 1, readonly code?: string) {
    super(message);
    this.name = "UserError";
  }
}

/** Turns a socket error code into a sentence naming the cause and the fix. */
export function explainSocketError(err: unknown, what: { host: string; port: number; role: "listen" | "connect" }): UserError {
  const code = (err as { code?: string } | null)?.code ?? "";
  const user = (message: string) => new UserError(message, 1, code || undefined);
  const at = `${what.host.includes(":") ? `[${what.host}]` : what.host}:${what.port}`;
  switch (code) {
    case "EADDRINUSE":
      return user(`port ${what.port} in use on ${what.host}: pass another port (-p) or stop the other server`);
    case "EADDRNOTAVAIL":
      return user(`address ${what.host} is not on this host: pass a local address to bind, or omit it`);
    case "EACCES":
    case "EPERM":
      if (what.role === "connect") return user(`cannot connect to ${at}: prohibited (a prohibit route or a firewall rule refuses it): check the routes (ip route) and the firewall`);
      return user(`not allowed to ${what.role} on ${at}: use a port above 1023 or run with the privilege`);
    case "EINVAL":
      if (what.role === "connect") return user(`cannot connect to ${at}: the route to it discards everything (a blackhole route): check the routes (ip route get ${what.host})`);
      break;
    case "ECONNREFUSED":
      return user(`connection to ${at} refused: start the server there first, or check host and port`);
    case "ENETUNREACH":
      return user(`cannot connect to ${at}: Network is unreachable (no route to its network): check the address, or the routes and default gateway (ip route)`);
    case "EHOSTUNREACH":
      return user(`cannot connect to ${at}: No route to host (no answer for that address on its network, or an unreachable route): check that the host is up, the address is right and the routes (ip route get ${what.host})`);
    case "ETIMEDOUT":
      return user(`connecting to ${at} timed out: check that the host is up and no firewall drops the port`);
    case "ENOTFOUND":
    case "EAI_NONAME":
      return user(`host ${what.host} not found: check the name or pass an IP address`);
  }
  const msg = err instanceof Error ? err.message : String(err);
  return user(`cannot ${what.role} ${what.role === "listen" ? "on" : "to"} ${at}: ${msg}`);
}
