import { expect, test } from "bun:test";
import { parseDevCounters, sarBlock } from "./nic-rate.ts";

const HEAD = "Inter-|   Receive                                                |  Transmit\n face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n";

test("sar -n DEV columns from two /proc/net/dev readings", () => {
  const a = parseDevCounters(`${HEAD}    lo: 1000 10 0 0 0 0 0 0 1000 10 0 0 0 0 0 0\n  eth0: 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n`);
  const b = parseDevCounters(`${HEAD}    lo: 205800 4010 0 0 0 0 0 0 205800 4010 0 0 0 0 0 0\n  eth0: 250000000 2000 0 0 0 0 4 2 0 0 0 0 0 0 0 0\n`);
  const text = sarBlock("12:00:02", a, b, 2, (i) => (i === "eth0" ? 1000 : 0));
  expect(text).toBe(
    "\n12:00:02       IFACE   rxpck/s   txpck/s    rxkB/s    txkB/s   rxcmp/s   txcmp/s  rxmcst/s   %ifutil\n" +
      "12:00:02          lo   2000.00   2000.00    100.00    100.00      0.00      0.00      0.00      0.00\n" +
      "12:00:02        eth0   1000.00      0.00 122070.31      0.00      2.00      0.00      1.00    100.00\n",
  );
});
