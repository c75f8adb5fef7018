import { describe, expect, test } from "bun:test";
import { parseCpuMhz } from "./cpuinfo.ts";
import { fixture } from "./testdata/fixture.ts";

describe("parseCpuMhz", () => {
  test("captured x86 /proc/cpuinfo: one value per processor", () => {
    expect(parseCpuMhz(fixture("proc-cpuinfo.txt"))).toEqual([2600, 2600]);
  });

  test("hand-written: differing speeds kept in order; 0 and other 'cpu MHz …' keys skipped", () => {
    expect(parseCpuMhz(fixture("proc-cpuinfo-mixed.txt"))).toEqual([1200.5, 3400.25]);
  });

  test("ARM without MHz -> empty (unknown, not 0)", () => {
    expect(parseCpuMhz(fixture("proc-cpuinfo-arm.txt"))).toEqual([]);
  });
});
