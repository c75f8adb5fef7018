import { describe, expect, test } from "bun:test";
import { UserError } from "../errors.ts";
import { formatHostPort, isLoopbackHost, parseHttpOption } from "./http-option.ts";

describe("parseHttpOption", () => {
  test("a bare port binds loopback", () => {
    expect(parseHttpOption("8080")).toEqual({ host: "127.0.0.1", port: 8080 });
    expect(parseHttpOption("0")).toEqual({ host: "127.0.0.1", port: 0 });
  });
  test("address and port", () => {
    expect(parseHttpOption("0.0.0.0:8080")).toEqual({ host: "0.0.0.0", port: 8080 });
    expect(parseHttpOption("localhost:9")).toEqual({ host: "localhost", port: 9 });
    expect(parseHttpOption("[::1]:8080")).toEqual({ host: "::1", port: 8080 });
    expect(parseHttpOption("[::]:65535")).toEqual({ host: "::", port: 65535 });
  });
  test.each(["", "http", "65536", "-1", "8080:", ":8080", "::1:8080", "[::1]", "[::1]8080", "a b:80", "1.2.3.4:x"])(
    "%p is refused with the accepted forms",
    (v) => {
      let err: unknown;
      try {
        parseHttpOption(v);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(UserError);
      expect((err as Error).message).toContain("pass PORT, ADDR:PORT or [IPv6]:PORT");
    },
  );
});

describe("isLoopbackHost", () => {
  test.each(["127.0.0.1", "127.1.2.3", "localhost", "LOCALHOST", "::1", "[::1]", "::ffff:127.0.0.1"])("%p is loopback", (h) => {
    expect(isLoopbackHost(h)).toBe(true);
  });
  test.each(["0.0.0.0", "::", "10.0.0.1", "128.0.0.1", "localhost.example", "evil.com", "127.0.0.1.evil.com", "::ffff:10.0.0.1"])(
    "%p is not",
    (h) => {
      expect(isLoopbackHost(h)).toBe(false);
    },
  );
});

test("formatHostPort brackets IPv6", () => {
  expect(formatHostPort("::1", 80)).toBe("[::1]:80");
  expect(formatHostPort("127.0.0.1", 80)).toBe("127.0.0.1:80");
});
