import { describe, expect, test } from "bun:test";
import { UserError } from "../errors.ts";
import { addressAllowed, parseAddress, parseCidr, parseCidrList, tryParseCidr } from "./cidr.ts";

describe("parseAddress", () => {
  test("IPv4, IPv6 and the forms sockets report", () => {
    expect([...parseAddress("10.1.2.3")!]).toEqual([10, 1, 2, 3]);
    expect([...parseAddress("::1")!]).toEqual([...Array(15).fill(0), 1]);
    expect([...parseAddress("[::1]")!]).toEqual([...Array(15).fill(0), 1]);
    expect([...parseAddress("fe80::1%eth0")!].slice(0, 2)).toEqual([0xfe, 0x80]);
    expect([...parseAddress("2001:db8:0:0:0:0:0:7")!]).toEqual([0x20, 1, 0x0d, 0xb8, ...Array(11).fill(0), 7]);
  });
  test("IPv4-mapped IPv6 comes back as IPv4, in dotted and hex form", () => {
    expect([...parseAddress("::ffff:127.0.0.1")!]).toEqual([127, 0, 0, 1]);
    expect([...parseAddress("::ffff:7f00:1")!]).toEqual([127, 0, 0, 1]);
  });
  test("refuses what is not an address", () => {
    for (const bad of ["", "1.2.3", "1.2.3.256", "01.2.3.4", "1::2::3", "12345::", "1:2:3:4:5:6:7:8:9", "::ffff:1.2.3", "host.example", "1:2:3:4:5:6:7"]) {
      expect(parseAddress(bad)).toBeUndefined();
    }
  });
});

describe("parseCidr", () => {
  test("clears host bits and keeps the prefix", () => {
    const c = parseCidr("10.9.8.7/8");
    expect(c.family).toBe(4);
    expect([...c.bytes]).toEqual([10, 0, 0, 0]);
    expect(c.prefix).toBe(8);
    expect(parseCidr("192.168.1.7").prefix).toBe(32);
    expect(parseCidr("fd00::/8").family).toBe(6);
    expect(parseCidr("::1").prefix).toBe(128);
  });
  test("an IPv4-mapped network is the IPv4 network", () => {
    const c = parseCidr("::ffff:10.0.0.0/104");
    expect(c.family).toBe(4);
    expect(c.prefix).toBe(8);
  });
  test("bad input names the flag, the text and the rule", () => {
    expect(() => parseCidr("10.0.0.0/33")).toThrow("--allow: '10.0.0.0/33' is not a CIDR: prefix must be 0-32");
    expect(() => parseCidr("::/129")).toThrow("prefix must be 0-128");
    expect(() => parseCidr("10.0.0/8")).toThrow("'10.0.0' is not an IPv4 or IPv6 address");
    expect(() => parseCidr("10.0.0.0/x")).toThrow("prefix must be 0-32");
    expect(() => parseCidrList(" , ")).toThrow(UserError);
  });
  test("a list takes commas and spaces", () => {
    expect(parseCidrList("10.0.0.0/8, ::1 127.0.0.1").map((c) => c.prefix)).toEqual([8, 128, 32]);
  });
  test("tryParseCidr reports without throwing", () => {
    expect(tryParseCidr("1.2.3.4/40")).toEqual({ ok: false, reason: "prefix must be 0-32" });
  });
});

describe("addressAllowed", () => {
  const list = parseCidrList("10.0.0.0/8,192.168.1.7,fd00::/8");
  test("inside and outside each network", () => {
    expect(addressAllowed(list, "10.255.0.1")).toBe(true);
    expect(addressAllowed(list, "11.0.0.1")).toBe(false);
    expect(addressAllowed(list, "192.168.1.7")).toBe(true);
    expect(addressAllowed(list, "192.168.1.8")).toBe(false);
    expect(addressAllowed(list, "fd12::5")).toBe(true);
    expect(addressAllowed(list, "fe80::1")).toBe(false);
  });
  test("IPv4 peers on a dual-stack socket match IPv4 entries", () => {
    expect(addressAllowed(list, "::ffff:10.1.1.1")).toBe(true);
    expect(addressAllowed(list, "::ffff:127.0.0.1")).toBe(false);
    expect(addressAllowed(parseCidrList("127.0.0.0/8"), "::ffff:127.0.0.1")).toBe(true);
  });
  test("families never cross", () => {
    expect(addressAllowed(parseCidrList("0.0.0.0/0"), "::1")).toBe(false);
    expect(addressAllowed(parseCidrList("::/0"), "127.0.0.1")).toBe(false);
    expect(addressAllowed(parseCidrList("::/0"), "::1")).toBe(true);
  });
  test("prefix boundaries inside a byte", () => {
    const l = parseCidrList("172.16.0.0/12");
    expect(addressAllowed(l, "172.31.255.255")).toBe(true);
    expect(addressAllowed(l, "172.32.0.0")).toBe(false);
    expect(addressAllowed(l, "172.15.255.255")).toBe(false);
  });
  test("an unparsable peer address is refused", () => {
    expect(addressAllowed(parseCidrList("0.0.0.0/0"), "?")).toBe(false);
  });
});
