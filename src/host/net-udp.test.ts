import { describe, expect, test } from "bun:test";
import { parseNetUdp, udpDropsForPort } from "./net-udp.ts";
import { fixture } from "./testdata/fixture.ts";

// Captured with a receiver on 127.0.0.1:23101 and [::1]:23101 (SO_RCVBUF 4096, never read) sent 50 and 30 datagrams.
describe("parseNetUdp", () => {
  test("captured /proc/net/udp", () => {
    const rows = parseNetUdp(fixture("proc-net-udp.txt"));
    expect(rows).toEqual([
      { localAddressHex: "00000000", localPort: 0xc769, rxQueue: 0, inode: 11948, drops: 0 },
      { localAddressHex: "0100007F", localPort: 23101, rxQueue: 0x1d40, inode: 11946, drops: 41 },
    ]);
  });

  test("captured /proc/net/udp6", () => {
    const rows = parseNetUdp(fixture("proc-net-udp6.txt"));
    expect(rows[1]).toEqual({ localAddressHex: "00000000000000000000000001000000", localPort: 23101, rxQueue: 0x1d40, inode: 11947, drops: 21 });
  });

  test("drops per port sum v4 and v6 sockets; an unbound port is unknown, not 0", () => {
    const rows = [...parseNetUdp(fixture("proc-net-udp.txt")), ...parseNetUdp(fixture("proc-net-udp6.txt"))];
    expect(udpDropsForPort(rows, 23101)).toBe(62);
    expect(udpDropsForPort(rows, 0xc769)).toBe(0);
    expect(udpDropsForPort(rows, 23102)).toBeUndefined();
  });
});
