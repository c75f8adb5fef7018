import { expect, test } from "bun:test";
import { vmHwmBytes } from "./proc-status.ts";

// Excerpt of /proc/<pid>/status of an anyperf loopback -P 16 on this machine.
const STATUS = `Name:\tanyperf
Umask:\t0022
State:\tS (sleeping)
VmPeak:\t75409128 kB
VmSize:\t75343592 kB
VmLck:\t       0 kB
VmHWM:\t  119336 kB
VmRSS:\t  117200 kB
Threads:\t9
`;

test("VmHWM in bytes, not VmPeak (virtual) or VmRSS (current)", () => {
  expect(vmHwmBytes(STATUS)).toBe(119336 * 1024);
});

test("a zombie's status has no VmHWM line", () => {
  expect(vmHwmBytes("Name:\tanyperf\nState:\tZ (zombie)\nThreads:\t1\n")).toBeUndefined();
});
