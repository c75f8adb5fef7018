import { expect, test } from "bun:test";
import { join } from "node:path";

test("--only with an id no row has is refused in one line naming the ids, before anything runs or is written", () => {
  const r = Bun.spawnSync([process.execPath, join(import.meta.dir, "bench.ts"), "--only", "tcp-1,nosuch"], { stdout: "pipe", stderr: "pipe", timeout: 20_000 });
  const err = r.stderr.toString().trim().split("\n");
  expect(r.exitCode).toBe(2);
  expect(err).toHaveLength(1);
  expect(err[0]).toMatch(/^bench: no row nosuch for --only: pass ids from startup,tcp-1,/);
  expect(r.stdout.toString()).not.toContain("written:");
});
