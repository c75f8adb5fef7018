import { describe, expect, test } from "bun:test";
import { Child, Ports, failure, show } from "./processes.ts";

describe("Child", () => {
  test("a process past its deadline is stopped and reported as timed out", async () => {
    const f = await new Child(["sleep", "5"], 100).done;
    expect(f.timedOut).toBe(true);
    expect(f.wallMs).toBeLessThan(3000);
    expect(failure(f)).toBe("sleep 5: no result within its deadline");
  });
  test("output, exit code and CPU of a process that ends by itself", async () => {
    const f = await new Child(["sh", "-c", "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; echo out; echo err >&2; exit 3"], 10_000).done;
    expect(f.stdout).toBe("out\n");
    expect(f.exitCode).toBe(3);
    expect(f.cpuSeconds).toBeGreaterThan(0);
    expect(f.peakRssBytes).toBeUndefined();
    expect(failure(f)).toBe("sh -c i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; echo out; echo err >&2; exit 3 exited 3: err");
  });
  test("peak RSS is the child's own, not the spawner's high-water mark", async () => {
    // Grow the bench process well past what the child will ever touch: ru_maxrss would report this.
    const ballast = new Uint8Array(160 << 20).fill(1);
    const f = await new Child(["sh", "-c", "sleep 0.2; head -c 40000000 /dev/zero | tail -c 1 >/dev/null"], 10_000, { watchRss: true }).done;
    expect(ballast[ballast.length - 1]).toBe(1);
    expect(f.peakRssBytes).toBeGreaterThan(100_000);
    expect(f.peakRssBytes).toBeLessThan(100 << 20);
  });
  test("finish stops a process that does not end within the wait", async () => {
    const c = new Child(["sleep", "5"], 10_000);
    const f = await c.finish(50);
    expect(f.signal).toBe("SIGTERM");
    expect(c.running).toBe(false);
  });
});

test("show names the binary anyperf wherever it was built", () => {
  expect(show(["/x/y/dist/anyperf", "loopback", "-t", "1"])).toBe("anyperf loopback -t 1");
});

test("Ports hands out blocks inside the range and wraps before leaving it", () => {
  const p = new Ports(24600, 10);
  expect([p.take(), p.take(3), p.take(5)]).toEqual([24600, 24601, 24604]);
  expect(p.take(2)).toBe(24600);
  expect(p.take(9)).toBe(24600);
});
