import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { createHostSampler } from "./sampler.ts";
import { hostWindow } from "./window.ts";

const linux = process.platform === "linux";

describe.skipIf(!linux)("createHostSampler (live /proc)", () => {
  test("two samples around a busy loop see this process's CPU and the host's", () => {
    const sampler = createHostSampler();
    expect(sampler).toBeDefined();
    const a = sampler!.sample();
    const until = performance.now() + 300;
    let spins = 0;
    while (performance.now() < until) spins++;
    const b = sampler!.sample();
    sampler!.close();

    const w = hostWindow(a, b);
    expect(spins).toBeGreaterThan(0);
    expect(w.seconds).toBeGreaterThanOrEqual(0.3);
    // 300 ms of spinning is ~30 ticks of user time; allow for tick granularity and a descheduled VM.
    expect(w.process?.total).toBeGreaterThan(0);
    expect(w.process!.total).toBeLessThan(100 * (w.cores ?? 1024) + 1);
    expect(w.cores).toBe(readFileSync("/proc/stat", "latin1").match(/^cpu\d+ /gm)?.length);
    expect(w.cpu?.busy).toBeGreaterThan(0);
    expect(w.perCpu?.length).toBe(w.cores);
    expect(w.nics?.lo).toBeDefined();
    expect(w.tcp?.retransSegs).toBeGreaterThanOrEqual(0);
    expect(w.udp?.inDatagrams).toBeGreaterThanOrEqual(0);
    expect(w.interrupts?.total).toBeGreaterThanOrEqual(0);
  });

  test("a restricted sampler reads only what it was asked for; closed sampler yields timestamps only", () => {
    const sampler = createHostSampler(["cpu", "process"])!;
    const s = sampler.sample();
    expect(s.cpu).toBeDefined();
    expect(s.process?.pid).toBe(process.pid);
    expect(s.nics).toBeUndefined();
    expect(s.interrupts).toBeUndefined();
    sampler.close();
    expect(Object.keys(sampler.sample()).sort()).toEqual(["monotonicMs", "wallMs"]);
  });
});
