import { describe, expect, test } from "bun:test";
import { UserError } from "../errors.ts";
import { parseIpv4Routes, parseIpv6Routes, parseLinkSpeed, parseLocalIpv4, parseSysfsSpeed, readLink, routeInterface } from "./link.ts";
import { fixture } from "./testdata/fixture.ts";

/*
 * testdata/link/veth: captured inside a network namespace with a veth (10.231.0.1/30, fd00:a231::1/64) and lo.
 * testdata/link/host: hand-written: two NICs with a device, two default routes of different metrics, a reject route.
 */
const root = (name: string) => new URL(`./testdata/link/${name}`, import.meta.url).pathname;
const veth = { route: fixture("link/veth/proc/net/route"), ipv6Route: fixture("link/veth/proc/net/ipv6_route"), fibTrie: fixture("link/veth/proc/net/fib_trie") };
const host = { route: fixture("link/host/proc/net/route") };

describe("routes", () => {
  test("/proc/net/route: little-endian hex, mask to prefix", () => {
    expect(parseIpv4Routes(veth.route, true)).toEqual([{ destination: 0x0ae70000n, prefix: 30, metric: 0, flags: 1, interface: "apdiag-v1" }]);
    // The same text on a big-endian host reads the bytes the other way round.
    expect(parseIpv4Routes("Iface\tDestination\tGateway\tFlags\tRefCnt\tUse\tMetric\tMask\neth0\t0AE70000\t0\t0001\t0\t0\t0\tFFFFFFFC\n", false)[0]?.prefix).toBe(30);
  });

  test("a non-contiguous mask is skipped, not guessed", () => {
    expect(parseIpv4Routes("Iface\tDestination\tGateway\tFlags\tRefCnt\tUse\tMetric\tMask\neth0\t0000000A\t0\t0001\t0\t0\t0\t00FF00FF\n", true)).toEqual([]);
  });

  test("/proc/net/ipv6_route", () => {
    const r = parseIpv6Routes(veth.ipv6Route);
    expect(r).toHaveLength(7);
    expect(r[0]).toEqual({ destination: 0xfd00a231000000000000000000000000n, prefix: 64, metric: 0x100, flags: 1, interface: "apdiag-v1" });
  });

  test("fib_trie: this host's addresses", () => {
    expect([...parseLocalIpv4(veth.fibTrie)].sort()).toEqual(["10.231.0.1", "127.0.0.1"]);
  });

  test("interface to a peer", () => {
    expect(routeInterface("10.231.0.2", veth)).toBe("apdiag-v1");
    expect(routeInterface("10.231.0.1", veth)).toBe("lo");
    expect(routeInterface("127.0.0.5", veth)).toBe("lo");
    expect(routeInterface("::ffff:10.231.0.2", veth)).toBe("apdiag-v1");
    expect(routeInterface("192.0.2.9", veth)).toBeUndefined();
    expect(routeInterface("fd00:a231::2", veth)).toBe("apdiag-v1");
    expect(routeInterface("fd00:a231::1", veth)).toBe("lo");
    expect(routeInterface("::1", veth)).toBe("lo");
    expect(routeInterface("2001:db8::1", veth)).toBeUndefined();
    expect(routeInterface("not-an-address", veth)).toBeUndefined();
  });

  test("longest prefix, then lowest metric; a reject route is no route", () => {
    expect(routeInterface("192.0.2.7", host)).toBe("eth0");
    expect(routeInterface("192.168.100.3", host)).toBe("eth1");
    expect(routeInterface("198.51.100.1", host)).toBe("eth1");
    expect(routeInterface("192.168.100.10", host)).toBeUndefined();
  });
});

describe("speed", () => {
  test("sysfs speed in Mb/s", () => {
    expect(parseSysfsSpeed("25000\n")).toBe(25e9);
    expect(parseSysfsSpeed("-1\n")).toBeUndefined();
    expect(parseSysfsSpeed("0")).toBeUndefined();
    expect(parseSysfsSpeed("")).toBeUndefined();
    expect(parseSysfsSpeed(undefined)).toBeUndefined();
  });

  test("--link-speed", () => {
    expect(parseLinkSpeed("1G")).toBe(1e9);
    expect(parseLinkSpeed("2.5g")).toBe(2.5e9);
    expect(parseLinkSpeed("100Mbps")).toBe(100e6);
    for (const bad of ["0", "fast", "1000pps", ""]) {
      expect(() => parseLinkSpeed(bad)).toThrow(UserError);
    }
    expect(() => parseLinkSpeed("0")).toThrow(/--link-speed "0".*e\.g\. 1G/);
  });
});

describe("readLink", () => {
  const veths = { proc: `${root("veth")}/proc`, sys: `${root("veth")}/sys` };
  const hosts = { proc: `${root("host")}/proc`, sys: `${root("host")}/sys` };

  test("a NIC's own speed", () => {
    expect(readLink("192.0.2.7", hosts)).toEqual({ interface: "eth0", speed_bps: 25e9, speed_source: "sysfs", mtu: 9000 });
  });

  test("a NIC that reports -1", () => {
    expect(readLink("192.168.100.3", hosts)).toEqual({ interface: "eth1", mtu: 1500, note: "eth1 reports no speed: pass --link-speed" });
  });

  test("a veth's nominal 10000 Mb/s is not taken for a link speed", () => {
    expect(readLink("10.231.0.2", veths)).toEqual({
      interface: "apdiag-v1",
      mtu: 1500,
      note: "apdiag-v1 is virtual (reports a nominal 10000 Mb/s): pass --link-speed",
    });
  });

  test("--link-speed names the shaped rate", () => {
    expect(readLink("10.231.0.2", { ...veths, override: 1e9 })).toEqual({ interface: "apdiag-v1", mtu: 1500, speed_bps: 1e9, speed_source: "--link-speed" });
  });

  test("loopback and no route", () => {
    expect(readLink("10.231.0.1", veths)).toEqual({ interface: "lo", mtu: 65536, note: "loopback: no link speed" });
    expect(readLink("203.0.113.1", veths)).toEqual({ note: "no route to 203.0.113.1 found: pass --link-speed" });
  });

  test("this machine's own files parse without throwing", () => {
    expect(readLink("127.0.0.1").interface).toBe("lo");
  });
});
