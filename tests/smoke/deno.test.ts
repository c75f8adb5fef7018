import { expect, test } from "bun:test";
import { Results } from "../../src/report/result.ts";

const DENO = new URL("../../node_modules/.bin/deno", import.meta.url).pathname;
const ROOT = new URL("../..", import.meta.url).pathname;

async function underDeno(...args: string[]) {
  const p = Bun.spawn([DENO, "run", "--allow-all", "main.ts", "loopback", "-t", "1", "-P", "1", "--json", ...args], { cwd: ROOT, stdout: "pipe", stderr: "pipe", env: { ...process.env, NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" } });
  const timer = setTimeout(() => p.kill("SIGKILL"), 50_000);
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  clearTimeout(timer);
  if (code !== 0) console.error(err);
  expect(code).toBe(0);
  return Results.parse(JSON.parse(out));
}

test("the program runs from source under Deno (node-compatible sockets): TCP", async () => {
  expect((await underDeno()).summary.bytes).toBeGreaterThan(0);
}, 60_000);

test("under Deno: UDP with sequence numbers", async () => {
  const r = await underDeno("--udp", "--length", "64", "-b", "10M");
  expect(r.summary.packets).toBeGreaterThan(100);
}, 60_000);

test("under Deno: TCP_RR", async () => {
  expect((await underDeno("--rr", "1,1")).summary.transactions).toBeGreaterThan(100);
}, 60_000);

test("deno check passes on the entry and the Worker (Bun's types declare the Bun global Deno never reaches)", async () => {
  const p = Bun.spawn([DENO, "check", "main.ts", "src/worker/data-worker.ts"], { cwd: ROOT, stdout: "pipe", stderr: "pipe", env: { ...process.env, NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" } });
  const [err, code] = await Promise.all([new Response(p.stderr).text(), p.exited]);
  expect(err).not.toContain("ERROR");
  expect(code).toBe(0);
}, 90_000);
