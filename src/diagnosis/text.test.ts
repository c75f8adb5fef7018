import { expect, test } from "bun:test";
import { diagnosisLines } from "./text.ts";

test("verdict, then evidence indented", () => {
  expect(diagnosisLines({ verdict: "window", evidence: ["BDP 11.9 MiB > socket buffer 4.00 MiB: raise the window", "link speed unknown"], busiest_cpu: {} })).toEqual([
    "diagnosis: window",
    "  BDP 11.9 MiB > socket buffer 4.00 MiB: raise the window",
    "  link speed unknown",
  ]);
});

test("the path's figures from the sending sockets close it when they were read", () => {
  const d = { verdict: "link" as const, evidence: ["285 Mbit/s is 95 % of the link's 300 Mbit/s (veth-a, from its tbf qdisc): the link is the limit"], busiest_cpu: {} };
  expect(diagnosisLines({ ...d, bottleneck_bps: 285.4e6, queueing_delay_us: 3587 }).slice(1)).toEqual([
    "  285 Mbit/s is 95 % of the link's 300 Mbit/s (veth-a, from its tbf qdisc): the link is the limit",
    "  path: bottleneck 285 Mbit/s, queueing delay 3.59 ms",
  ]);
  expect(diagnosisLines({ ...d, bottleneck_bps: 285.4e6 }).at(-1)).toBe("  path: bottleneck 285 Mbit/s");
});
