import { expect, test } from "bun:test";
import { takeHttpOptions } from "./global-http.ts";

test("--http and --http-token are taken out of any dialect's argv, both spellings", () => {
  expect(takeHttpOptions(["-c", "h", "--http", "8080", "-P", "4"])).toEqual({ rest: ["-c", "h", "-P", "4"], http: "8080", token: undefined });
  expect(takeHttpOptions(["--http=0.0.0.0:9", "--http-token=t0k", "-s"])).toEqual({ rest: ["-s"], http: "0.0.0.0:9", token: "t0k" });
  expect(takeHttpOptions(["-s", "-p", "5201"])).toEqual({ rest: ["-s", "-p", "5201"], http: undefined, token: undefined });
});

test("missing values and a token without --http are clear errors", () => {
  expect(() => takeHttpOptions(["--http"])).toThrow("--http needs a value");
  expect(() => takeHttpOptions(["--http-token", "x"])).toThrow("--http-token without --http");
});
