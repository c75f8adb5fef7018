import { describe, expect, test } from "bun:test";
import { SyscallError, errnoName, strerror } from "./errno.ts";

describe("errnoName", () => {
  test("Linux numbers map to their names", () => {
    expect(errnoName(2)).toBe("ENOENT");
    expect(errnoName(22)).toBe("EINVAL");
    expect(errnoName(98)).toBe("EADDRINUSE");
    expect(errnoName(115)).toBe("EINPROGRESS");
  });
  test("unknown numbers stay numeric", () => {
    expect(errnoName(99999)).toBe("errno 99999");
  });
  test("SyscallError carries the code", () => {
    const e = new SyscallError("setsockopt(TCP_CONGESTION)", 2);
    expect(e.code).toBe("ENOENT");
    expect(e.message).toBe("setsockopt(TCP_CONGESTION) failed: ENOENT");
  });
});

test("strerror: the system's words for a code, as glibc capitalises them; an unknown code as itself", () => {
  expect(strerror("ECONNRESET")).toBe("Connection reset by peer");
  expect(strerror("EPIPE")).toBe("Broken pipe");
  expect(strerror("ENOTCONN")).toBe("Socket is not connected");
  expect(strerror("EWHATEVER")).toBe("EWHATEVER");
});
