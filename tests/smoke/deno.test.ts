import { expect, test } from "bun:test";
import { Results } from "../../src/report/result.ts";

const DENO = new URL("../../node_modules/.bin/deno", import.meta.url).pathname;
const ROOT = new URL("../..", import.meta.url).pathname;

test("the program runs from source under Deno (node-compatible sockets)", async () => {
  const p = Bun.spawn([DENO, "run", "--allow-all", "main.ts", "loopback", "-t", "1", "-P", "1", "--json"], { cwd: ROOT, stdout: "pipe", stderr: "pipe", env: { ...process.env, NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" } });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  if (code !== 0) console.error(err);
  expect(code).toBe(0);
  const r = Results.parse(JSON.parse(out));
  expect(r.summary.bytes).toBeGreaterThan(0);
}, 60_000);
