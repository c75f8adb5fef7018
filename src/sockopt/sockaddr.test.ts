import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { isIPv6 } from "node:net";
import { decodeSockaddr, encodeSockaddr, familyOf, parseIPv4, parseIPv6 } from "./sockaddr.ts";

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");

describe("IP literals", () => {
  test("IPv4: strict dotted quad", () => {
    expect(parseIPv4("127.0.0.1")).toEqual(new Uint8Array([127, 0, 0, 1]));
    for (const bad of ["256.0.0.1", "1.2.3", "01.2.3.4", "1.2.3.4.5", "a.b.c.d", ""]) expect(parseIPv4(bad)).toBeUndefined();
  });

  test("IPv6: compression, embedded IPv4, rejects", () => {
    expect(hex(parseIPv6("::1")!)).toBe("00000000000000000000000000000001");
    expect(hex(parseIPv6("::")!)).toBe("0".repeat(32));
    expect(hex(parseIPv6("fe80::1:2")!)).toBe("fe800000000000000000000000010002");
    expect(hex(parseIPv6("::ffff:127.0.0.1")!)).toBe("00000000000000000000ffff7f000001");
    expect(hex(parseIPv6("1:2:3:4:5:6:7:8")!)).toBe("00010002000300040005000600070008");
    for (const bad of ["1::2::3", "1:2:3:4:5:6:7", "1:2:3:4:5:6:7:8::", "12345::", "::g", "1:2:3:4:5:6:7:8:9"]) {
      expect(parseIPv6(bad)).toBeUndefined();
    }
  });

  test("IPv6 parse agrees with node:net on random addresses", () => {
    fc.assert(
      fc.property(fc.ipV6(), (addr) => {
        expect(isIPv6(addr)).toBe(true);
        const ip = parseIPv6(addr);
        expect(ip).toBeDefined();
        // round trip through our formatter: same bytes
        const sa = encodeSockaddr("ipv6", addr, 1);
        expect(parseIPv6(decodeSockaddr(sa)!.host)).toEqual(ip!);
      }),
    );
  });

  test("familyOf", () => {
    expect(familyOf("10.1.2.3")).toBe("ipv4");
    expect(familyOf("::1")).toBe("ipv6");
    expect(familyOf("fe80::1%3")).toBe("ipv6");
    expect(familyOf("localhost")).toBeUndefined();
  });
});

describe("sockaddr", () => {
  test("sockaddr_in: family LE, port BE, address, zero padding", () => {
    expect(hex(encodeSockaddr("ipv4", "127.0.0.1", 23550))).toBe("02005bfe7f0000010000000000000000");
  });

  test("sockaddr_in6 with scope, and IPv4 mapped on an IPv6 socket", () => {
    expect(hex(encodeSockaddr("ipv6", "fe80::1%2", 80))).toBe("0a00005000000000fe80000000000000000000000000000102000000");
    expect(hex(encodeSockaddr("ipv6", "127.0.0.1", 1))).toBe("0a00000100000000" + "00000000000000000000ffff7f000001" + "00000000");
  });

  test("wrong family or bad port throws", () => {
    expect(() => encodeSockaddr("ipv4", "::1", 1)).toThrow();
    expect(() => encodeSockaddr("ipv4", "example.com", 1)).toThrow();
    expect(() => encodeSockaddr("ipv6", "fe80::1%eth0", 1)).toThrow();
    expect(() => encodeSockaddr("ipv4", "1.2.3.4", 65536)).toThrow();
  });

  test("decode inverts encode", () => {
    expect(decodeSockaddr(encodeSockaddr("ipv4", "10.0.0.7", 23001))).toEqual({ family: "ipv4", host: "10.0.0.7", port: 23001 });
    expect(decodeSockaddr(encodeSockaddr("ipv6", "::1", 23002))).toEqual({ family: "ipv6", host: "::1", port: 23002 });
    expect(decodeSockaddr(encodeSockaddr("ipv6", "2001:db8:0:0:1:0:0:1", 5))?.host).toBe("2001:db8::1:0:0:1");
    expect(decodeSockaddr(encodeSockaddr("ipv6", "1.2.3.4", 5))?.host).toBe("::ffff:1.2.3.4");
    expect(decodeSockaddr(encodeSockaddr("ipv6", "fe80::1%4", 5))?.host).toBe("fe80::1%4");
    expect(decodeSockaddr(new Uint8Array([1, 0, 0, 0]))).toBeUndefined();
  });
});
