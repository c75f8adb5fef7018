import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { ProcFile } from "./proc-file.ts";

describe("ProcFile", () => {
  test("grows its buffer until the whole file fits, and re-reads from the start each time", () => {
    const url = new URL("testdata/proc-net-netstat.txt", import.meta.url);
    const f = ProcFile.open(url.pathname, 8)!;
    const want = readFileSync(url, "latin1");
    expect(want.length).toBeGreaterThan(1000);
    expect(f.read()).toBe(want);
    expect(f.read()).toBe(want);
    f.close();
    expect(f.read()).toBeUndefined();
    f.close();
  });

  test.skipIf(process.platform !== "linux")("pread at 0 regenerates a /proc file", () => {
    const f = ProcFile.open("/proc/self/stat", 4)!;
    const first = f.read()!;
    const second = f.read()!;
    expect(first.startsWith(`${process.pid} (`)).toBe(true);
    expect(second.startsWith(`${process.pid} (`)).toBe(true);
    f.close();
  });

  test("a missing file cannot be opened", () => {
    expect(ProcFile.open("/nonexistent/anyperf")).toBeUndefined();
  });
});
