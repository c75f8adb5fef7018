import { describe, expect, test } from "bun:test";
import { bpsOf, FakeRun, fakeSource } from "../../tests/fixtures/status/fake-run.ts";
import { UserError } from "../errors.ts";
import { createStatusApp } from "./app.ts";
import { lineChart } from "../report/svg-charts.ts";
import { MemorySource } from "./memory-source.ts";
import { IntervalEvent, StatusDocument } from "./schema.ts";

const NOW = new Date("2026-12-02T10:00:05.000Z");
const now = () => NOW;

async function status(app: ReturnType<typeof createStatusApp>, init?: RequestInit): Promise<StatusDocument> {
  const res = await app.request("/status", init);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("application/json");
  return StatusDocument.parse(await res.json());
}

/** Reads SSE frames (blank-line separated) off a response body as they arrive. */
function frames(res: Response) {
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  let buf = "";
  return {
    async next(): Promise<string> {
      for (;;) {
        const i = buf.indexOf("\n\n");
        if (i >= 0) {
          const f = buf.slice(0, i);
          buf = buf.slice(i + 2);
          return f;
        }
        const { done, value } = await reader.read();
        if (done) throw new Error(`stream ended with ${JSON.stringify(buf)} unread`);
        buf += dec.decode(value, { stream: true });
      }
    },
    cancel: () => reader.cancel(),
  };
}

async function until(cond: () => boolean, ms = 2000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await Bun.sleep(5);
  }
}

describe("GET /status", () => {
  test("before any test: the process's mode and role, waiting, no test", async () => {
    const source = new MemorySource({ mode: "netserver", role: "server", persistent: true });
    const doc = await status(createStatusApp(source, { now }));
    expect(doc).toEqual({ mode: "netserver", role: "server", labels: {}, phase: "waiting", now: NOW.toISOString(), test: null, running: [], bytesTotal: 0, bytesByDirection: { sent: 0, received: 0, both: 0 }, recent: [] });
  });

  test("while measuring: the source's figures, unchanged", async () => {
    const { source, run } = fakeSource({ intervals: 10 });
    const app = createStatusApp(source, { now });
    expect((await status(app)).phase).toBe("warm-up");
    for (let i = 0; i < 3; i++) run.step();
    const doc = await status(app);
    expect(doc.phase).toBe("measuring");
    const t = doc.test!;
    expect(t.id).toBe("t1");
    expect(t.elapsedSeconds).toBe(3);
    expect(t.remainingSeconds).toBe(7);
    expect(t.throughput.current).toBe(bpsOf(2, 0) + bpsOf(2, 1));
    expect(t.streams.map((s) => s.bitsPerSecond)).toEqual([bpsOf(2, 0), bpsOf(2, 1)]);
    expect(t.intervals.map((i) => i.end)).toEqual([1, 2, 3]);
    expect(t).toEqual(run.view("measuring"));
    expect(doc.recent).toEqual([
      {
        id: "t1",
        mode: "loopback",
        role: "both",
        peer: null,
        phase: "measuring",
        startedAt: t.startedAt,
        elapsedSeconds: 3,
        averageBitsPerSecond: t.throughput.average,
        results: null,
      },
    ]);
  });

  test("a one-shot client is done after its test; a server goes back to waiting and lists it", async () => {
    for (const persistent of [false, true]) {
      const { source, run } = fakeSource({ intervals: 2, persistent, mode: "iperf3", role: "server" });
      run.step();
      run.step();
      const doc = await status(createStatusApp(source, { now }));
      expect(doc.phase).toBe(persistent ? "waiting" : "done");
      expect(doc.test?.phase).toBe("done");
      expect(doc.recent[0]?.results).toBe("/results/t1");
    }
  });
});

describe("GET /results", () => {
  test("404 with the reason before, the document after", async () => {
    const { source, run } = fakeSource({ intervals: 3 });
    const empty = createStatusApp(new MemorySource({ mode: "loopback", role: "both" }));
    const none = await empty.request("/results");
    expect(none.status).toBe(404);
    expect((await none.json()).error).toBe("no results yet: no test has run; they appear here once a test is done");

    const app = createStatusApp(source);
    run.step();
    const early = await app.request("/results");
    expect(early.status).toBe(404);
    expect((await early.json()).error).toBe("no results yet: test t1 is measuring, 2 s to go; they appear here once it is done");
    const byId = await app.request("/results/t1");
    expect(byId.status).toBe(404);
    const unknown = await app.request("/results/nope");
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).error).toBe('no test "nope" here: GET /status lists the recent tests');

    run.step();
    run.step();
    for (const path of ["/results", "/results/t1"]) {
      const res = await app.request(path);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual(run.results());
    }
  });

  test("a text results document is served as text", async () => {
    const source = new MemorySource({ mode: "ntttcp", role: "receiver" });
    const run = new FakeRun(source, { intervals: 1 });
    run.step();
    source.finish("t1", "<ntttcps/>");
    const res = await createStatusApp(source).request("/results");
    expect(res.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(await res.text()).toBe("<ntttcps/>");
  });
});

describe("token", () => {
  const { source } = fakeSource({ intervals: 3 });
  const app = createStatusApp(source, { token: "s3cret-T0ken" });
  const paths = ["/status", "/chart.svg", "/metrics", "/results", "/results/t1", "/events"];

  test.each(paths)("%s needs it", async (path) => {
    const res = await app.request(path);
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toContain("Bearer");
    expect((await res.json()).error).toContain("needs a token");
  });
  test.each(paths)("%s refuses a wrong one", async (path) => {
    const res = await app.request(path, { headers: { Authorization: "Bearer s3cret-T0kem" } });
    expect(res.status).toBe(401);
    expect((await res.json()).error).toContain("wrong token");
  });
  test("a malformed header is a bad request", async () => {
    const res = await app.request("/status", { headers: { Authorization: "Basic abc" } });
    expect(res.status).toBe(400);
  });
  test("the right one is accepted", async () => {
    const doc = await status(app, { headers: { Authorization: "Bearer s3cret-T0ken" } });
    expect(doc.test?.id).toBe("t1");
    const metrics = await app.request("/metrics", { headers: { Authorization: "Bearer s3cret-T0ken" } });
    expect(metrics.status).toBe(200);
  });
  test("the page itself holds no data and needs none", async () => {
    expect((await app.request("/")).status).toBe(200);
  });
  test("a token a Bearer header cannot carry is refused at start", () => {
    expect(() => createStatusApp(source, { token: "has space" })).toThrow(UserError);
    expect(() => createStatusApp(source, { token: "" })).toThrow(UserError);
  });
});

describe("loopbackHostsOnly", () => {
  const { source } = fakeSource({ intervals: 3 });
  const app = createStatusApp(source, { loopbackHostsOnly: true });
  test.each(["127.0.0.1:8080", "localhost:8080", "[::1]:8080", "localhost", "[::1]", "127.0.0.1:"])("Host %s is served", async (host) => {
    expect((await app.request("/status", { headers: { Host: host } })).status).toBe(200);
  });
  test.each(["evil.example:8080", "10.1.2.3", "[::]:80", "127.0.0.1:80@evil.com", "[::1]x", "localhost:80x", "[::1]:8080:1"])(
    "Host %s is refused (DNS rebinding, or not a bare name and port)",
    async (host) => {
      const res = await app.request("/status", { headers: { Host: host } });
      expect(res.status).toBe(421);
      expect((await res.json()).error).toContain("answers only loopback names");
    },
  );
});

test("GET / is one self-contained page", async () => {
  const { source } = fakeSource({ intervals: 3 });
  const res = await createStatusApp(source).request("/");
  expect(res.headers.get("content-type")).toContain("text/html");
  expect(res.headers.get("content-security-policy")).toContain("default-src 'none'");
  const html = await res.text();
  expect(html).toContain('<div id="chart"');
  expect(html).toContain(`swapSvg("chart.svg"`);
  // Nothing loaded from elsewhere: no external script, style, image or font.
  expect(html).not.toMatch(/(src|href)=["']?(https?:)?\/\//);
  expect(html).not.toMatch(/@import|url\(/);
});

test("unknown paths say what exists", async () => {
  const res = await createStatusApp(new MemorySource({ mode: "loopback", role: "both" })).request("/nope");
  expect(res.status).toBe(404);
  expect((await res.json()).error).toBe("no such page /nope: try /, /status, /chart.svg, /cpu.svg, /measurement.svg, /metrics, /events, /results, /healthz or /readyz");
});

describe("GET /events", () => {
  test("one interval event per interval, framed as SSE, unsubscribed on close", async () => {
    const { source, run } = fakeSource({ intervals: 5 });
    const app = createStatusApp(source);
    const res = await app.request("/events");
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    const f = frames(res);
    expect(await f.next()).toBe("retry: 2000\n: anyperf interval events");
    await until(() => source.listenerCount === 1);
    const sent = [run.step(), run.step()];
    for (const e of sent) {
      const lines = (await f.next()).split("\n");
      expect(lines[0]).toBe("event: interval");
      expect(lines[1]).toBe(`id: t1:${e.seq}`);
      expect(lines[2]!.startsWith("data: ")).toBe(true);
      expect(lines).toHaveLength(3);
      expect(IntervalEvent.parse(JSON.parse(lines[2]!.slice(6)))).toEqual(e);
    }
    await f.cancel();
    await until(() => source.listenerCount === 0);
  });

  test("heartbeats keep an idle stream open", async () => {
    const { source } = fakeSource({ intervals: 5 });
    const res = await createStatusApp(source, { heartbeatMs: 20 }).request("/events");
    const f = frames(res);
    await f.next();
    expect(await f.next()).toBe(": keep-alive");
    await f.cancel();
  });

  test("a client that stops reading is dropped instead of buffered without end", async () => {
    const { source, run } = fakeSource({ intervals: 1000 });
    const res = await createStatusApp(source).request("/events");
    await until(() => source.listenerCount === 1);
    for (let i = 0; i < 200 && source.listenerCount > 0; i++) {
      run.step();
      await Bun.sleep(0);
    }
    expect(source.listenerCount).toBe(0);
    expect(run.seq).toBeLessThan(200);
    await res.body?.cancel();
  });

  test("past the client limit: 503, and a place frees when one leaves", async () => {
    const { source } = fakeSource({ intervals: 5 });
    const app = createStatusApp(source, { maxEventClients: 1 });
    const first = await app.request("/events");
    const second = await app.request("/events");
    expect(second.status).toBe(503);
    expect((await second.json()).error).toBe("too many /events clients (1): close one, or poll /status");
    const f = frames(first);
    await f.next();
    await f.cancel();
    await until(() => source.listenerCount === 0);
    await Bun.sleep(5);
    const third = await app.request("/events");
    expect(third.status).toBe(200);
    await third.body?.cancel();
  });
});

describe("GET /chart.svg", () => {
  test("the running test's throughput drawn by the report's chart code: one path through every interval so far", async () => {
    const { source, run } = fakeSource({ intervals: 10 });
    const app = createStatusApp(source);
    const empty = await app.request("/chart.svg");
    expect(empty.headers.get("content-type")).toContain("image/svg+xml");
    for (let i = 0; i < 4; i++) run.step();
    const res = await app.request("/chart.svg");
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const svg = await res.text();
    expect(svg).toMatch(/^<svg data-test="t1" data-points="4" data-streams="0" xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    expect(svg).toContain("test t1: throughput, measuring");
    // The same drawing lineChart gives for those samples (what `anyperf report` uses), one M and three L.
    const d = /<path d="([^"]+)"/.exec(svg)![1]!;
    expect(d.split(" ").map((c) => c[0])).toEqual(["M", "L", "L", "L"]);
    const sum = (seq: number) => bpsOf(seq, 0) + bpsOf(seq, 1);
    const same = lineChart({ width: 800, height: 260, title: "", xLabel: "", yLabel: "", dots: false, series: [{ name: "total", points: [0, 1, 2, 3].map((s) => ({ x: s + 1, y: sum(s) })) }] });
    expect(d).toBe(/<path d="([^"]+)"/.exec(same)![1]!);
    expect(svg).not.toContain("<circle");
  });

  test("before any test: an empty chart that says so", async () => {
    const svg = await (await createStatusApp(new MemorySource({ mode: "serve", role: "server" })).request("/chart.svg")).text();
    expect(svg).toContain('data-points="0"');
    expect(svg).toContain("no test yet");
    expect(svg).not.toContain("<path");
  });
});
