import { afterEach, describe, expect, test } from "bun:test";
import { UserError } from "../src/errors.ts";
import { StatusDocument } from "../src/status/schema.ts";
import { startStatusServer, type StatusServer } from "../src/status/server.ts";
import { fakeSource } from "./fixtures/status/fake-run.ts";

const PORT = 29001;
const running: StatusServer[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
});
function start(...args: Parameters<typeof startStatusServer>): StatusServer {
  const s = startStatusServer(...args);
  running.push(s);
  return s;
}
function thrown(f: () => unknown): Error {
  try {
    f();
  } catch (e) {
    return e as Error;
  }
  throw new Error("did not throw");
}

describe("startStatusServer", () => {
  test("serves the app on loopback; port 0 reports the real port", async () => {
    const { source, run } = fakeSource({ intervals: 3 });
    run.step();
    const s = start({ host: "127.0.0.1", port: 0 }, source);
    expect(s.url).toBe(`http://127.0.0.1:${s.port}/`);
    expect(s.port).toBeGreaterThan(0);
    const res = await fetch(`${s.url}status`, { signal: AbortSignal.timeout(5000) });
    const doc = StatusDocument.parse(await res.json());
    expect(doc.test?.elapsedSeconds).toBe(1);
  });

  test("IPv6 loopback is bracketed in the URL", async () => {
    const { source } = fakeSource({ intervals: 3 });
    const s = start({ host: "::1", port: 0 }, source);
    expect(s.url).toBe(`http://[::1]:${s.port}/`);
    expect((await fetch(`${s.url}status`, { signal: AbortSignal.timeout(5000) })).status).toBe(200);
  });

  test.each(["0.0.0.0", "::", "192.0.2.1"])("%s without a token is refused before binding", (host) => {
    const { source } = fakeSource({ intervals: 3 });
    const err = thrown(() => start({ host, port: PORT }, source));
    expect(err).toBeInstanceOf(UserError);
    expect(err.message).toBe(`refusing to serve status on ${host} without --http-token: pass --http-token TOKEN or bind 127.0.0.1`);
  });

  test("with a token, requests need it", async () => {
    const { source } = fakeSource({ intervals: 3 });
    const s = start({ host: "127.0.0.1", port: 0, token: "tok.en" }, source);
    expect((await fetch(`${s.url}status`, { signal: AbortSignal.timeout(5000) })).status).toBe(401);
    const ok = await fetch(`${s.url}status`, { headers: { Authorization: "Bearer tok.en" }, signal: AbortSignal.timeout(5000) });
    expect(ok.status).toBe(200);
  });

  test("a port in use names the option to change", () => {
    const { source } = fakeSource({ intervals: 3 });
    start({ host: "127.0.0.1", port: PORT }, source);
    const err = thrown(() => start({ host: "127.0.0.1", port: PORT }, source));
    expect(err).toBeInstanceOf(UserError);
    expect(err.message).toBe(`port ${PORT} in use on 127.0.0.1: pass another --http port or stop the other server`);
  });

  test("an address not on this host is explained", () => {
    const { source } = fakeSource({ intervals: 3 });
    const err = thrown(() => start({ host: "192.0.2.1", port: PORT, token: "t" }, source));
    expect(err).toBeInstanceOf(UserError);
    expect(err.message).toBe("address 192.0.2.1 is not on this host: pass a local address to --http, or only the port");
  });

  test("events stream over HTTP, and stop() ends them and unsubscribes", async () => {
    const { source, run } = fakeSource({ intervals: 5 });
    const s = startStatusServer({ host: "127.0.0.1", port: 0 }, source);
    const res = await fetch(`${s.url}events`, { signal: AbortSignal.timeout(10_000) });
    const reader = res.body!.getReader();
    const dec = new TextDecoder();
    let text = "";
    const readUntil = async (needle: string) => {
      while (!text.includes(needle)) {
        const { done, value } = await reader.read();
        if (done) throw new Error(`ended before ${needle}`);
        text += dec.decode(value, { stream: true });
      }
    };
    await readUntil("anyperf interval events\n\n");
    expect(source.listenerCount).toBe(1);
    run.step();
    await readUntil("id: t1:0\n");
    await s.stop();
    let ended = false;
    for (;;) {
      const r = await reader.read().catch(() => ({ done: true }));
      if (r.done) {
        ended = true;
        break;
      }
    }
    expect(ended).toBe(true);
    const deadline = Date.now() + 2000;
    while (source.listenerCount > 0 && Date.now() < deadline) await Bun.sleep(10);
    expect(source.listenerCount).toBe(0);
  });
});

/** One raw request over TCP, as curl -0 or an old monitoring script sends it; the whole answer once the peer closes. */
async function rawRequest(port: number, request: string): Promise<{ status: number; headers: string; body: string }> {
  const net = await import("node:net");
  const text = await new Promise<string>((resolve, reject) => {
    const c = net.connect(port, "127.0.0.1", () => c.write(request));
    let got = "";
    c.setEncoding("utf8");
    c.on("data", (d: string) => void (got += d));
    c.on("error", reject);
    c.on("end", () => resolve(got));
    setTimeout(() => {
      c.destroy();
      resolve(got);
    }, 3000);
  });
  const [head = "", body = ""] = text.split("\r\n\r\n", 2);
  return { status: Number(/^HTTP\/1\.\d (\d{3})/.exec(head)?.[1] ?? 0), headers: head, body };
}

describe("HTTP/1.0 and methods (issue 21 item 19)", () => {
  test("an HTTP/1.0 request without Host gets the page it names", async () => {
    const { source, run } = fakeSource({ intervals: 3 });
    run.step();
    const s = start({ host: "127.0.0.1", port: 0 }, source);
    const res = await rawRequest(s.port, "GET /status HTTP/1.0\r\n\r\n");
    expect(res.body).not.toContain("no such page");
    expect(res.status).toBe(200);
    expect(StatusDocument.parse(JSON.parse(res.body)).test?.elapsedSeconds).toBe(1);
    const results = await rawRequest(s.port, "GET /results/none HTTP/1.0\r\n\r\n");
    expect(results.body).toContain('no test \\"none\\" here');
  });

  test("POST /status is 405 with Allow, not 404", async () => {
    const { source } = fakeSource({ intervals: 3 });
    const s = start({ host: "127.0.0.1", port: 0 }, source);
    for (const path of ["status", "metrics", "results", "results/x", ""]) {
      const res = await fetch(`${s.url}${path}`, { method: "POST", body: "x", signal: AbortSignal.timeout(5000) });
      expect(res.status).toBe(405);
      expect(res.headers.get("allow")).toBe("GET, HEAD");
      expect(((await res.json()) as { error: string }).error).toContain(`/${path} answers GET only`);
    }
    const missing = await fetch(`${s.url}nothing`, { method: "POST", signal: AbortSignal.timeout(5000) });
    expect(missing.status).toBe(404);
    expect((await fetch(`${s.url}status`, { method: "HEAD", signal: AbortSignal.timeout(5000) })).status).toBe(200);
  });
});
