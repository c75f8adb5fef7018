import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { Results } from "../../src/report/result.ts";

const BIN = new URL("../../dist/anyperf", import.meta.url).pathname;

describe.skipIf(!existsSync(BIN))("compiled binary", () => {
  test("loopback -t 1 --json prints one valid results document", async () => {
    const p = Bun.spawn([BIN, "loopback", "-t", "1", "-P", "2", "--json"], { stdout: "pipe", stderr: "pipe" });
    const [out, code] = await Promise.all([new Response(p.stdout).text(), p.exited]);
    expect(code).toBe(0);
    const r = Results.parse(JSON.parse(out));
    expect(r.summary.bytes).toBeGreaterThan(0);
    expect(r.streams.length).toBe(4);
  });
  test("an unknown command prints usage and exits 2", async () => {
    const p = Bun.spawn([BIN, "frobnicate"], { stdout: "pipe", stderr: "pipe" });
    const [err, code] = await Promise.all([new Response(p.stderr).text(), p.exited]);
    expect(code).toBe(2);
    expect(err).toContain("unknown command 'frobnicate'");
    expect(err).toContain("usage: anyperf");
  });
  test("a bad option value is one clear line, exit 2, no stack", async () => {
    const p = Bun.spawn([BIN, "loopback", "-t", "abc"], { stdout: "pipe", stderr: "pipe" });
    const [err, code] = await Promise.all([new Response(p.stderr).text(), p.exited]);
    expect(code).toBe(2);
    expect(err.trim().split("\n")).toHaveLength(1);
    expect(err).toContain("--time abc");
  });
  test("Ctrl+C during a run still prints what was measured", async () => {
    const p = Bun.spawn([BIN, "loopback", "-t", "30", "-P", "1", "--json"], { stdout: "pipe", stderr: "pipe" });
    await Bun.sleep(1500);
    p.kill("SIGINT");
    const [out, code] = await Promise.all([new Response(p.stdout).text(), p.exited]);
    const r = Results.parse(JSON.parse(out));
    expect(r.interrupted).toBe(true);
    expect(r.summary.bytes).toBeGreaterThan(0);
    expect(r.summary.seconds).toBeLessThan(5);
    expect(code).toBe(130);
  });
});
