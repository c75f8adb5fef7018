/**
 * The status endpoint's inputs under fuzzing: request paths, query strings, methods, Host and Authorization headers
 * against createStatusApp (with and without a token, loopback-only or not) over a fake source in every phase; and
 * the --http / --http-token option parsers. Every request is answered in time with a status from the documented
 * set and a JSON error body, never a 500; data routes never answer 200 without the token or to a foreign Host.
 */
import fc from "fast-check";
import { UserError } from "../../src/errors.ts";
import { checkToken, createStatusApp } from "../../src/status/app.ts";
import { parseHttpOption } from "../../src/status/http-option.ts";
import { MemorySource } from "../../src/status/memory-source.ts";
import { StatusDocument } from "../../src/status/schema.ts";
import type { StatusSource } from "../../src/status/source.ts";
import { FakeRun } from "../fixtures/status/fake-run.ts";
import { asyncTarget, boundedAsync, check, syncTarget, typed, type FuzzTarget } from "./harness.ts";

const TOKEN = "s3cr3t-T0ken_~+/=";
const NOW = new Date("2026-12-02T10:00:05.000Z");

function source(kind: number, steps: number): StatusSource {
  const s = new MemorySource({ mode: "iperf3", role: "server", persistent: kind === 2 });
  if (kind === 0) return s;
  const run = new FakeRun(s, { id: "t1", intervals: 4, udp: kind === 2, rr: kind === 3 });
  for (let i = 0; i < steps && !run.done; i++) run.step();
  return s;
}

const printable = (max: number) => fc.stringMatching(new RegExp(`^[\\x20-\\x7e]{0,${max}}$`));

const pathArb = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom("/", "/status", "/chart.svg", "/metrics", "/events", "/results", "/results/t1", "/results/nope", "/results/", "/healthz", "/readyz", "/start") },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      "//status", "/status/", "/STATUS", "/status/..", "/results/..%2fstatus", "/results/%2e%2e", "/%73tatus", "/results/t1/x",
      "/results/%ff%fe", "/results/%00", "/results/t1%00", "/metrics?x", "/./status", "/events/", "/index.html",
    ),
  },
  { weight: 2, arbitrary: fc.webPath() },
  { weight: 2, arbitrary: fc.array(fc.string({ maxLength: 12 }), { maxLength: 4 }).map((segs) => `/${segs.map(encodeURIComponent).join("/")}`) },
);

const hostArb = fc.option(
  fc.oneof(
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        "127.0.0.1", "127.0.0.1:8080", "localhost", "LOCALHOST:29000", "[::1]", "[::1]:80", "127.255.0.9:1", "[::ffff:127.0.0.1]:5",
      ),
    },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        "evil.com", "evil.com:8080", "127.0.0.1.evil.com", "localhost.evil.com", "127.1", "0.0.0.0", "[::]", "[::1", "::1",
        "10.0.0.1:80", "", ":80", "[::1]:80@evil.com", "127.0.0.1:80@evil.com", "localhost:80:90",
      ),
    },
    { weight: 1, arbitrary: fc.domain() },
    { weight: 1, arbitrary: printable(40) },
  ),
  { nil: undefined },
);

const authArb = fc.option(
  fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(`Bearer ${TOKEN}`, `bearer ${TOKEN}`, `Bearer   ${TOKEN}`, `BEARER ${TOKEN}`) },
    {
      weight: 3,
      arbitrary: fc.constantFrom("Bearer", "Bearer ", "Bearer wrong", `Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(1)}`, `Basic ${btoa(`u:${TOKEN}`)}`, `Token ${TOKEN}`, `Bearer ${TOKEN} extra`, `Bearer\t${TOKEN}`),
    },
    { weight: 2, arbitrary: printable(60) },
  ),
  { nil: undefined },
);

const requestArb = fc.record({
  method: fc.constantFrom("GET", "GET", "GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH", "PROPFIND"),
  path: pathArb,
  query: fc.option(fc.oneof(fc.webQueryParameters().map((q) => `?${q}`), printable(20).map((q) => `?${encodeURIComponent(q)}`)), { nil: undefined }),
  host: hostArb,
  auth: authArb,
  extra: fc.array(fc.tuple(fc.constantFrom("accept", "last-event-id", "x-forwarded-host", "cookie", "origin"), printable(30)), { maxLength: 3 }),
  app: fc.record({ token: fc.boolean(), loopbackHostsOnly: fc.boolean() }),
  source: fc.tuple(fc.nat({ max: 3 }), fc.nat({ max: 5 })),
});

type Req = typeof requestArb extends fc.Arbitrary<infer T> ? T : never;

const PROTECTED = new Set(["/status", "/chart.svg", "/metrics", "/events", "/results", "/start"]);
// 409: POST /start with no paused client waiting.
const EXPECTED_STATUS = new Set([200, 400, 401, 404, 405, 409, 421, 503]);
/** A Host a browser on this machine could send: a loopback name, optionally a port. */
const LOOPBACK_HOST = /^(localhost|127\.\d{1,3}\.\d{1,3}\.\d{1,3}|\[::1\]|\[::ffff:127\.\d{1,3}\.\d{1,3}\.\d{1,3}\])(:\d*)?$/i;

function tokenAccepted(auth: string | undefined): boolean {
  if (auth === undefined) return false;
  const v = auth.trim();
  return /^bearer /i.test(v) && v.slice(7).trimStart() === TOKEN;
}

async function checkRequest(r: Req): Promise<void> {
  const app = createStatusApp(source(r.source[0], r.source[1]), {
    now: () => NOW,
    heartbeatMs: 60_000,
    ...(r.app.token ? { token: TOKEN } : {}),
    ...(r.app.loopbackHostsOnly ? { loopbackHostsOnly: true } : {}),
  });
  const headers = new Headers();
  for (const [k, v] of r.extra) headers.append(k, v);
  if (r.host !== undefined) headers.set("host", r.host);
  if (r.auth !== undefined) headers.set("authorization", r.auth);
  const url = `http://127.0.0.1:29000${r.path}${r.query ?? ""}`;
  const built = typed("new Request", () => new Request(url, { method: r.method, headers }), TypeError);
  // A request the runtime itself cannot build never reaches the app.
  if (!built.ok) return;
  const req = built.value;
  const res = await boundedAsync(`${r.method} ${r.path}`, async () => await app.request(req), 2000);
  const route = new URL(req.url).pathname;
  const dataRoute = PROTECTED.has(route) || route.startsWith("/results/");
  try {
    check(EXPECTED_STATUS.has(res.status), () => `${r.method} ${route} answered ${res.status}`);
    // A known page asked with another method says which it takes (src/status/README.md).
    if (res.status === 405) check(res.headers.get("allow") === "GET, HEAD", () => `${r.method} ${route}: 405 without Allow: GET, HEAD`);
    const host = req.headers.get("host") ?? undefined;
    const foreign = host !== undefined && !LOOPBACK_HOST.test(host);
    if (res.status === 200 && r.app.loopbackHostsOnly && foreign) {
      check(false, () => `loopback-only server answered 200 to Host ${JSON.stringify(host)}`);
    }
    if (res.status === 200 && r.app.token && dataRoute) {
      check(tokenAccepted(req.headers.get("authorization") ?? undefined), () => `${route} answered 200 without the token (Authorization ${JSON.stringify(r.auth)})`);
    }
    if (r.app.loopbackHostsOnly && foreign) {
      check(res.status === 421, () => `Host ${JSON.stringify(host)} got ${res.status}, not 421`);
    }
    const type = res.headers.get("content-type") ?? "";
    if (res.status !== 200) {
      check(type.includes("application/json"), () => `${res.status} with content-type ${type}`);
      if (r.method !== "HEAD") {
        const body = (await boundedAsync("error body", () => res.json(), 2000)) as { error?: unknown };
        check(typeof body.error === "string" && body.error.length > 0, () => `${res.status} body without an error line: ${JSON.stringify(body)}`);
      }
    } else if (route === "/status" && r.method === "GET") {
      check(StatusDocument.safeParse(await boundedAsync("status body", () => res.json(), 2000)).success, "/status body fails StatusDocument");
    } else if (route === "/events") {
      check(type.includes("text/event-stream"), `/events answered ${type}`);
    }
  } finally {
    await res.body?.cancel().catch(() => {});
  }
}

export const targets: Record<string, FuzzTarget> = {
  "status app: every request answered in time, documented statuses, no 500, no data without token or to a foreign Host": asyncTarget(requestArb, checkRequest),

  "status options: parseHttpOption and checkToken give a value or a UserError": syncTarget(
    fc.tuple(
      fc.oneof(
        fc.constantFrom("8080", "0", "65535", "65536", "0.0.0.0:8080", "[::1]:8080", "[::1]", "::1:80", "localhost:", ":80", " 80 ", "[]:80", "[1:2]:99999"),
        fc.string({ maxLength: 30 }),
        fc.tuple(fc.oneof(fc.ipV4(), fc.ipV6().map((a) => `[${a}]`), fc.domain()), fc.integer({ min: -1, max: 70000 })).map(([h, p]) => `${h}:${p}`),
      ),
      fc.oneof(fc.string({ maxLength: 30 }), fc.constantFrom(TOKEN, "a", "a==", "=a", "a b", "")),
    ),
    ([option, token]) => {
      const o = typed("parseHttpOption", () => parseHttpOption(option), UserError);
      if (o.ok) {
        check(Number.isInteger(o.value.port) && o.value.port >= 0 && o.value.port <= 65535, `port ${o.value.port} accepted`);
        check(o.value.host.length > 0 && !/[\s/]/.test(o.value.host), `host ${JSON.stringify(o.value.host)} accepted`);
      } else check(!o.error.message.includes("\n"), "error is not one line");
      const t = typed("checkToken", () => checkToken(token), UserError);
      if (t.ok) {
        check(/^[A-Za-z0-9._~+/-]+=*$/.test(token), `token ${JSON.stringify(token)} accepted`);
        check(typed("createStatusApp", () => createStatusApp(new MemorySource({ mode: "x", role: "server" }), { token })).ok, "an accepted token is refused by the app");
      }
    },
  ),
};
