import { expect, test } from "bun:test";
import { existsSync } from "node:fs";

const deno = new URL("../../node_modules/.bin/deno", import.meta.url).pathname;

test.skipIf(!existsSync(deno))("under Deno the sockopt modules load and report themselves unavailable", () => {
  const script = new URL("./testdata/deno-load.ts", import.meta.url).pathname;
  const r = Bun.spawnSync([deno, "run", "-A", script], { stderr: "pipe" });
  expect(r.stderr.toString()).toBe("");
  expect(r.exitCode).toBe(0);
  expect(JSON.parse(r.stdout.toString())).toEqual({ sockopt: "unavailable" });
});
