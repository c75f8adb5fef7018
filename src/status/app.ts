import { Hono } from "hono";
import { bearerAuth } from "hono/bearer-auth";
import { HTTPException } from "hono/http-exception";
import { UserError } from "../errors.ts";
import { buildStatusDocument, shownTest } from "./document.ts";
import { eventsHandler } from "./events.ts";
import { isLoopbackHost } from "./http-option.ts";
import { METRICS_CONTENT_TYPE, renderMetrics } from "./metrics.ts";
import { PAGE_CONTENT_SECURITY_POLICY, PAGE_HTML } from "./page.ts";
import type { StatusSource } from "./source.ts";
import { isReady, releaseStart } from "./readiness.ts";
import { liveChartSvg } from "./live-chart.ts";
import { endCpuSvg, liveCpuSvg } from "./end-cpu-chart.ts";
import { measurementSvg } from "./measurement-chart.ts";

export interface StatusAppOptions {
  /** Required Bearer token for every route but the page itself (which holds no data). */
  token?: string;
  /**
   * Answer only requests whose Host is a loopback name, so a web page on another site cannot read the status
   * through DNS rebinding. The server sets it when it listens on loopback without a token.
   */
  loopbackHostsOnly?: boolean;
  /** SSE comment sent this often so idle connections (a server between tests) stay open; default 10 s. */
  heartbeatMs?: number;
  /** Concurrent /events streams; more get 503. Default 32. */
  maxEventClients?: number;
  now?: () => Date;
}

/** RFC 6750 token68: what a Bearer header can carry, and what hono's bearerAuth compares. */
const TOKEN68 = /^[A-Za-z0-9._~+/-]+=*$/;

export function checkToken(token: string): void {
  if (!TOKEN68.test(token)) {
    throw new UserError("--http-token may hold only letters, digits and . _ ~ + / - (a Bearer token): pass another token");
  }
}

/**
 * The name in a Host header, "name[:port]" or "[v6][:port]"; undefined when anything but a port follows the name, so
 * "127.0.0.1:80@evil.com" or "[::1]x" is refused rather than read as loopback.
 */
function hostOf(hostHeader: string): string | undefined {
  return /^(\[[^\]]*\]|[^:[\]]*)(?::\d*)?$/.exec(hostHeader)?.[1];
}

function resultsMissing(source: StatusSource, id: string | undefined): string {
  const view = id === undefined ? source.current() ?? source.tests()[0] : source.tests().find((t) => t.id === id);
  if (!view) {
    return id === undefined
      ? "no results yet: no test has run; they appear here once a test is done"
      : `no test "${id}" here: GET /status lists the recent tests`;
  }
  if (view.phase !== "done") {
    const left = view.remainingSeconds === null ? "" : `, ${Math.ceil(view.remainingSeconds)} s to go`;
    return `no results yet: test ${view.id} is ${view.phase}${left}; they appear here once it is done`;
  }
  return `no results for test ${view.id}: its front end is still completing them (the remote half, the diagnosis), or it ended without any`;
}

/** Every route below, for telling a wrong method from a wrong path. */
const PAGES = /^\/(?:status|chart\.svg|cpu\.svg|measurement\.svg|metrics|events|healthz|readyz|results(?:\/[^/]+(?:\/cpu\.svg)?)?)?$/;

/** The status app, runtime-free: serve it with server.ts or call `app.request()` in tests. */
export function createStatusApp(source: StatusSource, opts: StatusAppOptions = {}): Hono {
  if (opts.token !== undefined) checkToken(opts.token);
  const now = opts.now ?? (() => new Date());
  const app = new Hono();

  if (opts.loopbackHostsOnly) {
    app.use("*", async (c, next) => {
      const host = c.req.header("host");
      const name = host === undefined ? undefined : hostOf(host);
      if (host !== undefined && (name === undefined || !isLoopbackHost(name))) {
        return c.json({ error: `Host "${host}" refused: this status server answers only loopback names (127.0.0.1, localhost, [::1])` }, 421);
      }
      await next();
    });
  }

  // Probes come before the token: a kubelet sends none, and they carry no test data.
  app.get("/healthz", (c) => c.text("ok\n"));
  app.get("/readyz", (c) => (isReady() ? c.text("ready\n") : c.json({ error: "not ready: listeners still starting" }, 503)));

  app.get("/", (c) => {
    c.header("Content-Security-Policy", PAGE_CONTENT_SECURITY_POLICY);
    c.header("Cache-Control", "no-store");
    return c.html(PAGE_HTML);
  });

  if (opts.token !== undefined) {
    const auth = bearerAuth({
      token: opts.token,
      noAuthenticationHeader: { message: { error: "this status server needs a token: send Authorization: Bearer TOKEN" } },
      invalidAuthenticationHeader: { message: { error: "malformed Authorization header: send Authorization: Bearer TOKEN" } },
      invalidToken: { message: { error: "wrong token: send the --http-token the server was started with" } },
    });
    for (const path of ["/status", "/chart.svg", "/cpu.svg", "/measurement.svg", "/metrics", "/events", "/results", "/results/*", "/start"]) app.use(path, auth);
  }

  app.get("/status", (c) => {
    c.header("Cache-Control", "no-store");
    return c.json(buildStatusDocument(source, now()));
  });

  app.get("/chart.svg", (c) => {
    c.header("Cache-Control", "no-store");
    c.header("Content-Type", "image/svg+xml; charset=utf-8");
    return c.body(liveChartSvg(source));
  });

  app.get("/cpu.svg", (c) => {
    c.header("Cache-Control", "no-store");
    const svg = liveCpuSvg(shownTest(source.tests()));
    if (svg === undefined) return c.json({ error: "no CPU per core yet: it comes with the shown test's first interval (Linux)" }, 404);
    c.header("Content-Type", "image/svg+xml; charset=utf-8");
    return c.body(svg);
  });

  app.get("/measurement.svg", (c) => {
    c.header("Cache-Control", "no-store");
    const m = source.measurement?.();
    if (m === undefined) return c.json({ error: "no measurement of several tests here: only 'anyperf client --responsiveness' makes one" }, 404);
    c.header("Content-Type", "image/svg+xml; charset=utf-8");
    return c.body(measurementSvg(m));
  });

  app.get("/metrics", (c) => {
    c.header("Content-Type", METRICS_CONTENT_TYPE);
    return c.body(renderMetrics(buildStatusDocument(source, now())));
  });

  app.get("/events", eventsHandler(source, { heartbeatMs: opts.heartbeatMs ?? 10_000, maxClients: opts.maxEventClients ?? 32 }));

  app.post("/start", (c) =>
    releaseStart() ? c.json({ started: true }) : c.json({ error: "nothing is waiting to start: only 'anyperf client --paused' waits for POST /start" }, 409));

  const results = (id: string | undefined) => {
    const doc = source.results(id);
    if (doc === undefined) return new Response(JSON.stringify({ error: resultsMissing(source, id) }), {
      status: 404,
      headers: { "Content-Type": "application/json" },
    });
    if (typeof doc === "string") return new Response(doc, { headers: { "Content-Type": "text/plain; charset=utf-8" } });
    return Response.json(doc);
  };
  app.get("/results", () => results(undefined));
  app.get("/results/:id", (c) => results(c.req.param("id")));
  app.get("/results/:id/cpu.svg", (c) => {
    const id = c.req.param("id");
    const doc = source.results(id);
    const svg = doc === undefined ? undefined : endCpuSvg(doc);
    if (svg === undefined) return c.json({ error: doc === undefined ? resultsMissing(source, id) : `test ${id} ended without CPU figures per core` }, 404);
    c.header("Content-Type", "image/svg+xml; charset=utf-8");
    return c.body(svg);
  });

  app.notFound((c) => {
    const path = c.req.path;
    // A page that exists, asked with another method (POST /status): 405 and what it takes (RFC 9110 §15.5.6).
    if (PAGES.test(path)) {
      c.header("Allow", "GET, HEAD");
      return c.json({ error: `${path} answers GET only (got ${c.req.method})` }, 405);
    }
    return c.json({ error: `no such page ${path}: try /, /status, /chart.svg, /cpu.svg, /measurement.svg, /metrics, /events, /results, /healthz or /readyz` }, 404);
  });
  app.onError((err, c) => {
    if (err instanceof HTTPException) return err.getResponse();
    return c.json({ error: err.message }, 500);
  });
  return app;
}
