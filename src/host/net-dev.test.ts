import { describe, expect, test } from "bun:test";
import { parseNetDev } from "./net-dev.ts";
import { fixture } from "./testdata/fixture.ts";

describe("parseNetDev", () => {
  test("captured /proc/net/dev", () => {
    const d = parseNetDev(fixture("proc-net-dev.txt"));
    expect(Object.keys(d)).toEqual(["lo", "ifb0", "ifb1", "eth0"]);
    expect(d.eth0).toEqual({ rxBytes: 264350014, rxPackets: 6000, rxErrs: 0, rxDrop: 0, txBytes: 268447, txPackets: 3265, txErrs: 0, txDrop: 0 });
    expect(d.lo?.txPackets).toBe(24601);
  });

  test("hand-written: counter touching the colon, dotted and dashed names, short rows skipped", () => {
    const d = parseNetDev(fixture("proc-net-dev-wide.txt"));
    expect(Object.keys(d)).toEqual(["eth0.100", "br-1a2b"]);
    expect(d["eth0.100"]).toEqual({
      rxBytes: 123456789012345, rxPackets: 987654321, rxErrs: 1, rxDrop: 2,
      txBytes: 18446744073709551, txPackets: 55, txErrs: 3, txDrop: 4,
    });
    expect(d["br-1a2b"]?.txBytes).toBe(20);
  });
});
