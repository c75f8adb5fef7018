import { UserError } from "../errors.ts";
import { createStatusApp, checkToken } from "./app.ts";
import { formatHostPort, isLoopbackHost, type HttpListen } from "./http-option.ts";
import type { StatusSource } from "./source.ts";
import { addressAllowed, type Cidr } from "../access/cidr.ts";

/**
 * Serves the status app in this process: Bun.serve under Bun, Deno.serve under Deno (the same selection Hono's
 * adapters make). main.ts imports this module lazily, only when --http is given, so Hono costs no start-up time
 * otherwise.
 */

export interface StatusServerOptions extends HttpListen {
  token?: string;
  /** Passed to the app; tests shorten it. */
  heartbeatMs?: number;
  /** --allow: peers outside these networks get 403 before the app sees the request. */
  allow?: readonly Cidr[];
}

export interface StatusServer {
  /** Base URL, e.g. http://127.0.0.1:8080/ (the real port when 0 was asked for). */
  url: string;
  port: number;
  /** Closes the listener and every open connection (SSE streams included). */
  stop(): Promise<void>;
}

type Handler = (req: Request, peer: string | undefined) => Response | Promise<Response>;

/**
 * Bun hands an HTTP/1.0 request without Host over with a bare path ("/status") as its URL, which the router misreads;
 * such a request is for this listener, so it gets this listener's origin.
 */
function absolute(req: Request, host: string, port: number): Request {
  if (!req.url.startsWith("/")) return req;
  return new Request(`http://${formatHostPort(host, port)}${req.url}`, req);
}
interface DenoHttpServer {
  addr: { port: number };
  shutdown(): Promise<void>;
}
interface DenoServeApi {
  serve(opts: { hostname: string; port: number; onListen?: () => void }, handler: (req: Request, info: { remoteAddr?: { hostname?: string } }) => Response | Promise<Response>): DenoHttpServer;
}

function explainListenError(err: unknown, host: string, port: number): UserError {
  const e = err as { code?: string; name?: string; message?: string } | null;
  const code = e?.code ?? e?.name ?? "";
  const at = formatHostPort(host, port);
  if (code === "EADDRINUSE" || code === "AddrInUse") {
    return new UserError(`port ${port} in use on ${host}: pass another --http port or stop the other server`);
  }
  if (code === "EADDRNOTAVAIL" || code === "AddrNotAvailable") {
    return new UserError(`address ${host} is not on this host: pass a local address to --http, or only the port`);
  }
  if (code === "EACCES" || code === "EPERM" || code === "PermissionDenied") {
    return new UserError(`not allowed to listen on ${at}: pass an --http port above 1023 or run with the privilege`);
  }
  return new UserError(`cannot serve status on ${at}: ${e?.message ?? String(err)}`);
}

function listen(host: string, port: number, fetch: Handler): { port: number; stop(): Promise<void> } {
  if (typeof Bun !== "undefined") {
    // SSE connections sit idle between intervals; the app's heartbeat (10 s) keeps them under this limit.
    const server = Bun.serve({ hostname: host, port, fetch: (req, srv) => fetch(req, srv.requestIP(req)?.address), idleTimeout: 30 });
    return { port: server.port ?? port, stop: () => server.stop(true) };
  }
  const deno = (globalThis as { Deno?: DenoServeApi }).Deno;
  if (!deno) throw new UserError("--http needs Bun or Deno: run the anyperf binary, or the source with bun or deno");
  const server = deno.serve({ hostname: host, port, onListen: () => {} }, (req, info) => fetch(req, info.remoteAddr?.hostname));
  return { port: server.addr.port, stop: () => server.shutdown() };
}

export function startStatusServer(opts: StatusServerOptions, source: StatusSource): StatusServer {
  if (opts.token === undefined && !isLoopbackHost(opts.host)) {
    throw new UserError(
      `refusing to serve status on ${opts.host} without --http-token: pass --http-token TOKEN or bind 127.0.0.1`,
    );
  }
  if (opts.token !== undefined) checkToken(opts.token);
  const app = createStatusApp(source, {
    token: opts.token,
    loopbackHostsOnly: opts.token === undefined,
    heartbeatMs: opts.heartbeatMs,
  });
  let server: { port: number; stop(): Promise<void> };
  try {
    const allow = opts.allow;
    server = listen(opts.host, opts.port, (req, peer) => {
      if (allow && (peer === undefined || !addressAllowed(allow, peer))) {
        return Response.json({ error: `${peer ?? "this address"} is not in this server's --allow list` }, { status: 403 });
      }
      return app.fetch(absolute(req, opts.host, server.port));
    });
  } catch (err) {
    if (err instanceof UserError) throw err;
    throw explainListenError(err, opts.host, opts.port);
  }
  return { url: `http://${formatHostPort(opts.host, server.port)}/`, port: server.port, stop: server.stop };
}

export { parseHttpOption, isLoopbackHost } from "./http-option.ts";
export { createStatusApp } from "./app.ts";
export type { StatusSource } from "./source.ts";
export { TestRunSource } from "./test-run-source.ts";
