import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resolveToken } from "./secret.ts";

const dir = mkdtempSync(join(tmpdir(), "anyperf-secret-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("argv, else the file's first line, else the variable; argv and file together refused", () => {
  const file = join(dir, "token");
  writeFileSync(file, "from-file\nsecond line\n");
  const env = { ANYPERF_TOKEN: "from-env" };
  const base = { flag: "--token", envName: "ANYPERF_TOKEN", env };
  expect(resolveToken({ ...base, value: "from-argv" })).toBe("from-argv");
  expect(resolveToken({ ...base, file })).toBe("from-file");
  expect(resolveToken(base)).toBe("from-env");
  expect(resolveToken({ ...base, env: {} })).toBeUndefined();
  expect(resolveToken({ ...base, env: { ANYPERF_TOKEN: "  " } })).toBeUndefined();
  expect(() => resolveToken({ ...base, value: "a", file })).toThrow("--token and --token-file both given: pass one");
});

test("a missing or empty file names the flag and the fix", () => {
  const empty = join(dir, "empty");
  writeFileSync(empty, "\n");
  const base = { flag: "--http-token", envName: "ANYPERF_HTTP_TOKEN", env: {} };
  expect(() => resolveToken({ ...base, file: join(dir, "absent") })).toThrow(/^--http-token-file .*absent: .*; pass a readable file$/);
  expect(() => resolveToken({ ...base, file: empty })).toThrow("the first line is empty; put the token there");
});
