import { describe, expect, test } from "bun:test";
import { ensureFdLimit, fdsNeeded } from "./fd-limit.ts";

describe("fdsNeeded", () => {
  test("one descriptor per end of a flow (listeners close once accepted), TCP_CRR's server two, plus the reserve", () => {
    const both = { sends: true, receives: true };
    expect(fdsNeeded(10_000, "rr", both)).toBe(20_256);
    expect(fdsNeeded(10_000, "rr", { sends: true, receives: false })).toBe(10_256);
    expect(fdsNeeded(10_000, "stream", { sends: false, receives: true })).toBe(10_256);
    expect(fdsNeeded(1, "crr", both)).toBe(259);
    expect(fdsNeeded(2, "crr", { sends: false, receives: true })).toBe(260);
  });
});

describe("ensureFdLimit", () => {
  test("a limit already high enough passes", async () => {
    await ensureFdLimit(16, "-P 1");
  });
  test.skipIf(process.platform !== "linux")("a need beyond the kernel's ceiling names ulimit -n and the flag", async () => {
    // fs.nr_open caps every process, root included, so this can never be granted.
    const nrOpen = Number(await Bun.file("/proc/sys/fs/nr_open").text());
    await expect(ensureFdLimit(nrOpen + 1, "-P 99999")).rejects.toThrow(`-P 99999 needs about ${nrOpen + 1} open files`);
    await expect(ensureFdLimit(nrOpen + 1, "-P 99999")).rejects.toThrow("ulimit -n");
    await expect(ensureFdLimit(nrOpen + 1, "-P 99999", "or else")).rejects.toThrow(", or else or run fewer streams");
  });
});
