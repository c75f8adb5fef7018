import { expect, test } from "bun:test";
import { takeHttpOptions } from "./global-http.ts";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

test("--http and --http-token are taken out of any dialect's argv, both spellings", () => {
  expect(takeHttpOptions(["-c", "h", "--http", "8080", "-P", "4"])).toEqual({ rest: ["-c", "h", "-P", "4"], http: "8080", token: undefined });
  expect(takeHttpOptions(["--http=0.0.0.0:9", "--http-token=t0k", "-s"])).toEqual({ rest: ["-s"], http: "0.0.0.0:9", token: "t0k" });
  expect(takeHttpOptions(["-s", "-p", "5201"])).toEqual({ rest: ["-s", "-p", "5201"], http: undefined, token: undefined });
});

test("missing values and a token without --http are clear errors", () => {
  expect(() => takeHttpOptions(["--http"])).toThrow("--http needs a value");
  expect(() => takeHttpOptions(["--http-token", "x"])).toThrow("--http-token without --http");
});

test("the status token from a file or ANYPERF_HTTP_TOKEN; the variable alone turns nothing on", () => {
  const f = join(mkdtempSync(join(tmpdir(), "http-token-")), "token");
  writeFileSync(f, "fil3\n");
  expect(takeHttpOptions(["--http", "0.0.0.0:9", "--http-token-file", f])).toEqual({ rest: [], http: "0.0.0.0:9", token: "fil3" });
  expect(takeHttpOptions(["--http=9", `--http-token-file=${f}`, "-s"]).token).toBe("fil3");
  expect(takeHttpOptions(["--http", "9"], { ANYPERF_HTTP_TOKEN: "env" }).token).toBe("env");
  expect(takeHttpOptions(["--http", "9", "--http-token", "argv"], { ANYPERF_HTTP_TOKEN: "env" }).token).toBe("argv");
  expect(takeHttpOptions(["-s"], { ANYPERF_HTTP_TOKEN: "env" })).toEqual({ rest: ["-s"] });
  expect(() => takeHttpOptions(["--http", "9", "--http-token", "a", "--http-token-file", f])).toThrow("--http-token and --http-token-file both given");
  expect(() => takeHttpOptions(["--http-token-file", f])).toThrow("--http-token-file without --http");
});
