import { describe, expect, test } from "bun:test";
import { COOKIE_ALPHABET, COOKIE_BYTES, decodeCookie, encodeCookie, generateCookie, isCookieString } from "./cookie.ts";
import { CONTROL_CAPTURES, loadControlCapture, readFixture } from "../../tests/fixtures/iperf3/capture.ts";

describe("cookie", () => {
  test.each(CONTROL_CAPTURES)("the captured control cookie of %s decodes and re-encodes", (name) => {
    const c = loadControlCapture(name);
    const first = c.segments[0]!;
    expect(first.from).toBe("client");
    expect(first.bytes.length).toBe(COOKIE_BYTES);
    const d = decodeCookie(first.bytes);
    expect(d.ok).toBe(true);
    if (d.ok) expect(encodeCookie(d.cookie)).toEqual(first.bytes);
  });

  test("the data connection repeats the control cookie (busy capture)", () => {
    const text = readFixture("iperf3-busy-access-denied.txt");
    const hex = /stream 1 \S+ len=37 first48=([0-9a-f]+)/.exec(text)![1]!;
    const bytes = Uint8Array.from(hex.match(/../g)!.map((h) => parseInt(h, 16)));
    const control = loadControlCapture("iperf3-busy-access-denied.txt").segments[0]!.bytes;
    expect(Array.from(bytes)).toEqual(Array.from(control));
  });

  test("generated cookies use the alphabet and are distinct", () => {
    const a = generateCookie();
    const b = generateCookie();
    expect(isCookieString(a)).toBe(true);
    expect(a).not.toBe(b);
    expect(generateCookie((buf) => buf.fill(0))).toBe("a".repeat(36));
    expect(generateCookie((buf) => buf.fill(255))).toBe(COOKIE_ALPHABET[31]!.repeat(36));
  });

  test("malformed cookies are refused with a reason", () => {
    const good = encodeCookie(generateCookie());
    const noNul = good.slice();
    noNul[36] = 0x61;
    expect(decodeCookie(noNul)).toEqual({ ok: false, reason: "cookie is not NUL-terminated" });
    const upper = good.slice();
    upper[3] = 0x41;
    const r = decodeCookie(upper);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toContain("byte 3 (0x41)");
    expect(decodeCookie(good.subarray(0, 36)).ok).toBe(false);
    expect(decodeCookie(new TextEncoder().encode("GET / HTTP/1.1\r\nHost: x\r\n\r\n0123456789")).ok).toBe(false);
    expect(() => encodeCookie("short")).toThrow(RangeError);
    expect(isCookieString("1".repeat(36))).toBe(false);
  });
});
