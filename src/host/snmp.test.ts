import { describe, expect, test } from "bun:test";
import { parseSnmp } from "./snmp.ts";
import { fixture } from "./testdata/fixture.ts";

describe("parseSnmp", () => {
  test("captured /proc/net/snmp: Tcp and Udp counters by name", () => {
    const t = parseSnmp(fixture("proc-net-snmp.txt"));
    expect(t.Tcp).toMatchObject({ MaxConn: -1, ActiveOpens: 47, InSegs: 7276, OutSegs: 4541, RetransSegs: 0, AttemptFails: 0 });
    expect(t.Udp).toMatchObject({ InDatagrams: 23241, NoPorts: 0, InErrors: 41, OutDatagrams: 23292, RcvbufErrors: 41 });
    expect(Object.keys(t)).toEqual(["Ip", "Icmp", "IcmpMsg", "Tcp", "Udp", "UdpLite"]);
  });

  test("captured /proc/net/netstat: TcpExt retransmission kinds (no TCPForwardRetrans on 6.18)", () => {
    const t = parseSnmp(fixture("proc-net-netstat.txt"));
    expect(t.TcpExt).toHaveProperty("TCPLostRetransmit");
    expect(t.TcpExt).toHaveProperty("TCPSynRetrans");
    expect(t.TcpExt?.TCPForwardRetrans).toBeUndefined();
    expect(t.IpExt?.InOctets).toBe(336461562);
  });

  test("hand-written: values without a names line are ignored; sections pair by name", () => {
    const t = parseSnmp("Tcp: 1 2\nUdp: A B\nTcp: C D\nTcp: 3 4\nUdp: 5 6\n");
    expect(t).toEqual({ Tcp: { C: 3, D: 4 } });
  });
});
