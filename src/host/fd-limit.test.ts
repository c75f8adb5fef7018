import { describe, expect, test } from "bun:test";
import { ensureFdLimit, loopbackFdsNeeded } from "./fd-limit.ts";

describe("loopbackFdsNeeded", () => {
  test("three descriptors per TCP stream, two per UDP stream, plus the reserve", () => {
    expect(loopbackFdsNeeded(10_000, "tcp")).toBe(30_256);
    expect(loopbackFdsNeeded(1, "udp")).toBe(258);
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
  });
});
