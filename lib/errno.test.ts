import { expect, test } from "bun:test";
import { Errno, strerror } from "./errno.ts";

test("every named errno has glibc's text; others read as glibc's unknown", () => {
  for (const n of Object.values(Errno)) expect(strerror(n)).not.toStartWith("Unknown error");
  // As iperf3 3.12 and netperf 2.7.0 print them (captures: iperf3 busy server, netserver bind failure).
  expect(strerror(Errno.EADDRINUSE)).toBe("Address already in use");
  expect(strerror(Errno.ECONNREFUSED)).toBe("Connection refused");
  expect(strerror(4095)).toBe("Unknown error 4095");
});
