import { expect, test } from "bun:test";
import { Errno, errnoOfError, strerror } from "./errno.ts";

test("every named errno has glibc's text; others read as glibc's unknown", () => {
  for (const n of Object.values(Errno)) expect(strerror(n)).not.toStartWith("Unknown error");
  // As iperf3 3.12 and netperf 2.7.0 print them (captures: iperf3 busy server, netserver bind failure).
  expect(strerror(Errno.EADDRINUSE)).toBe("Address already in use");
  expect(strerror(Errno.ECONNREFUSED)).toBe("Connection refused");
  expect(strerror(4095)).toBe("Unknown error 4095");
});

test("a runtime error's code names its Linux errno; anything else takes the fallback", () => {
  expect(errnoOfError(Object.assign(new Error("x"), { code: "ECONNREFUSED" }), Errno.EIO)).toBe(111);
  expect(errnoOfError(Object.assign(new Error("x"), { code: "ENETUNREACH" }), Errno.EIO)).toBe(101);
  for (const odd of [new Error("x"), { code: "EWHATEVER" }, { code: "OK" }, { code: "toString" }, null, "ECONNREFUSED"]) {
    expect(errnoOfError(odd, Errno.EIO)).toBe(Errno.EIO);
  }
});
