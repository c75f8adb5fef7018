import { expect, test } from "bun:test";

/** Under Deno there is no Bun.serve: the status server must pick Deno.serve and behave the same. */

const DENO = new URL("../node_modules/.bin/deno", import.meta.url).pathname;
const ROOT = new URL("..", import.meta.url).pathname;

test("the status server runs under Deno (Deno.serve)", async () => {
  const p = Bun.spawn([DENO, "run", "--allow-all", "tests/fixtures/status/deno-serve.ts"], {
    cwd: ROOT,
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" },
  });
  const killer = setTimeout(() => p.kill("SIGKILL"), 50_000);
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  clearTimeout(killer);
  if (code !== 0) console.error(err);
  expect(code).toBe(0);
  const seen = JSON.parse(out.trim().split("\n").at(-1)!);
  expect(seen.runtime).toBe("deno");
  expect(seen.status).toBe(200);
  expect(seen.elapsed).toBe(1);
  expect(seen.sawInterval).toBe(true);
  expect(seen.inUse).toMatch(/^port \d+ in use on 127\.0\.0\.1: pass another --http port or stop the other server$/);
}, 60_000);
