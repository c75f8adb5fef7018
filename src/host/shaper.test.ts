import { describe, expect, test } from "bun:test";
import { shapedLink } from "./shaper.ts";

describe("shapedLink", () => {
  const tbf = { interface: "veth-a", kind: "tbf", rate_bps: 300e6 };
  test("a virtual interface's nominal speed is never the link: the shaper's rate is", () => {
    const veth = { interface: "veth-a", mtu: 1500, note: "veth-a is virtual (reports a nominal 10000 Mb/s): pass --link-speed" };
    expect(shapedLink(veth, tbf)).toEqual({ interface: "veth-a", mtu: 1500, speed_bps: 300e6, speed_source: "qdisc", shaper: { kind: "tbf", rate_bps: 300e6 } });
    expect(shapedLink(veth, undefined)).toBe(veth);
  });
  test("the slower of a NIC and its shaper; --link-speed wins, the shaper named beside it", () => {
    const nic = { interface: "eth0", speed_bps: 10e9, speed_source: "sysfs" as const };
    expect(shapedLink(nic, { ...tbf, interface: "eth0" })).toMatchObject({ speed_bps: 300e6, speed_source: "qdisc" });
    expect(shapedLink({ ...nic, speed_bps: 100e6 }, { ...tbf, interface: "eth0" })).toMatchObject({ speed_bps: 100e6, speed_source: "sysfs", shaper: { kind: "tbf" } });
    const given = { interface: "veth-a", speed_bps: 1e9, speed_source: "--link-speed" as const };
    expect(shapedLink(given, tbf)).toEqual({ ...given, shaper: { kind: "tbf", rate_bps: 300e6 } });
  });
});
