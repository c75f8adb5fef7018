import { UserError } from "../errors.ts";

/**
 * `--http [ADDR:]PORT`. Kept apart from the server so the CLI can parse and check the option without loading Hono
 * (start-up time).
 */

export interface HttpListen {
  host: string;
  port: number;
}

const DEFAULT_HOST = "127.0.0.1";

function bad(value: string, why: string): UserError {
  return new UserError(
    `bad --http value "${value}": ${why}; pass PORT, ADDR:PORT or [IPv6]:PORT (e.g. 8080, 0.0.0.0:8080, [::1]:8080)`,
    2,
  );
}

function parsePort(value: string, text: string): number {
  if (!/^\d{1,5}$/.test(text)) throw bad(value, `"${text}" is not a port number`);
  const port = Number(text);
  if (port > 65535) throw bad(value, `port ${port} is above 65535`);
  return port;
}

/** "8080" | "0.0.0.0:8080" | "[::1]:8080" | "localhost:8080" -> host and port (port 0 = pick a free one). */
export function parseHttpOption(value: string): HttpListen {
  const v = value.trim();
  if (v === "") throw bad(value, "it is empty");
  if (v.startsWith("[")) {
    const m = /^\[([0-9A-Fa-f:.]+)\]:(.*)$/.exec(v);
    if (!m) throw bad(value, "an IPv6 address needs its port after the bracket");
    return { host: m[1]!, port: parsePort(value, m[2]!) };
  }
  const colon = v.lastIndexOf(":");
  if (colon < 0) return { host: DEFAULT_HOST, port: parsePort(value, v) };
  const host = v.slice(0, colon);
  if (host.includes(":")) throw bad(value, "write an IPv6 address in brackets");
  if (!/^[A-Za-z0-9.-]+$/.test(host)) throw bad(value, `"${host}" is not an address`);
  return { host, port: parsePort(value, v.slice(colon + 1)) };
}

/** True for addresses only this host can reach: 127.0.0.0/8, ::1 (also IPv4-mapped) and "localhost". */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, "");
  if (h === "localhost" || h === "::1" || h === "0:0:0:0:0:0:0:1") return true;
  const v4 = h.startsWith("::ffff:") ? h.slice(7) : h;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

/** host:port as it appears in a URL. */
export function formatHostPort(host: string, port: number): string {
  return `${host.includes(":") ? `[${host}]` : host}:${port}`;
}
