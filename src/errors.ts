/** An error the user can act on: printed as one line (cause and fix), never with a stack trace. */
export class UserError extends Error {
  constructor(message: string, readonly exitCode = 1) {
    super(message);
    this.name = "UserError";
  }
}

/** Turns a socket error code into a sentence naming the cause and the fix. */
export function explainSocketError(err: unknown, what: { host: string; port: number; role: "listen" | "connect" }): UserError {
  const code = (err as { code?: string } | null)?.code ?? "";
  const at = `${what.host.includes(":") ? `[${what.host}]` : what.host}:${what.port}`;
  switch (code) {
    case "EADDRINUSE":
      return new UserError(`port ${what.port} in use on ${what.host}: pass another port (-p) or stop the other server`);
    case "EADDRNOTAVAIL":
      return new UserError(`address ${what.host} is not on this host: pass a local address to bind, or omit it`);
    case "EACCES":
    case "EPERM":
      return new UserError(`not allowed to ${what.role} on ${at}: use a port above 1023 or run with the privilege`);
    case "ECONNREFUSED":
      return new UserError(`connection to ${at} refused: start the server there first, or check host and port`);
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      return new UserError(`${at} is unreachable: check the address and the route to it`);
    case "ETIMEDOUT":
      return new UserError(`connecting to ${at} timed out: check that the host is up and no firewall drops the port`);
    case "ENOTFOUND":
    case "EAI_NONAME":
      return new UserError(`host ${what.host} not found: check the name or pass an IP address`);
    default: {
      const msg = err instanceof Error ? err.message : String(err);
      return new UserError(`cannot ${what.role} ${what.role === "listen" ? "on" : "to"} ${at}: ${msg}`);
    }
  }
}
