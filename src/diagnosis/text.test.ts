import { expect, test } from "bun:test";
import { diagnosisLines } from "./text.ts";

test("verdict, then evidence indented", () => {
  expect(diagnosisLines({ verdict: "window", evidence: ["BDP 11.9 MiB > socket buffer 4.00 MiB: raise the window", "link speed unknown"], busiest_cpu: {} })).toEqual([
    "diagnosis: window",
    "  BDP 11.9 MiB > socket buffer 4.00 MiB: raise the window",
    "  link speed unknown",
  ]);
});
