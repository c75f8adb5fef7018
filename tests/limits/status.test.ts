import { afterEach, expect, test } from "bun:test";
import { parseCidrList } from "../../src/access/cidr.ts";
import { startStatusServer, type StatusServer } from "../../src/status/server.ts";
import { fakeSource } from "../fixtures/status/fake-run.ts";

const running: StatusServer[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
});

async function get(allow: string | undefined, host = "127.0.0.1"): Promise<{ status: number; body: string }> {
  const { source } = fakeSource({ intervals: 2 });
  const s = startStatusServer({ host, port: 0, allow: allow === undefined ? undefined : parseCidrList(allow) }, source);
  running.push(s);
  const res = await fetch(`${s.url}status`, { signal: AbortSignal.timeout(5000) });
  return { status: res.status, body: await res.text() };
}

test("--allow without the peer's network: 403 naming the list, on every route", async () => {
  const r = await get("10.0.0.0/8");
  expect(r.status).toBe(403);
  expect(r.body).toContain("127.0.0.1 is not in this server's --allow list");
});

test("--allow with the peer's network: served as before", async () => {
  expect((await get("127.0.0.0/8")).status).toBe(200);
  expect((await get(undefined)).status).toBe(200);
});

test("IPv6 peers are matched against IPv6 entries", async () => {
  expect((await get("::1", "::1")).status).toBe(200);
  expect((await get("127.0.0.0/8", "::1")).status).toBe(403);
});
