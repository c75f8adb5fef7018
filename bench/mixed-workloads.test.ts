import { expect, test } from "bun:test";
import { MIXED_TESTS, mixedSplit } from "./mixed-workloads.ts";

test("the server's sending half is the TCP_MAERTS tests, its receiving half the TCP_STREAM tests", () => {
  // The stock netserver's run from docs/PERFORMANCE.md: STREAM 6354 + 5531, MAERTS 5979 + 5571 (10^6 bit/s).
  const s = mixedSplit(MIXED_TESTS, [6354, 5531, 5979, 5571]);
  expect(s.sendBps).toBe(11550e6);
  expect(s.recvBps).toBe(11885e6);
  expect(s.sendToRecv).toBeCloseTo(0.9718, 4);
  expect(mixedSplit(MIXED_TESTS, [0, 0, 1, 1]).sendToRecv).toBe(0);
});
