import { afterAll, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findTool } from "./peers.ts";

const dir = mkdtempSync(join(tmpdir(), "bench-peers-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function exe(path: string) {
  writeFileSync(path, "#!/bin/sh\n");
  chmodSync(path, 0o755);
}

test("anyperf's own link is passed over for the stock tool further down PATH", () => {
  const dist = join(dir, "dist"), usr = join(dir, "usr");
  for (const d of [dist, usr]) Bun.spawnSync(["mkdir", "-p", d]);
  exe(join(dist, "anyperf"));
  symlinkSync("anyperf", join(dist, "iperf3"));
  exe(join(usr, "iperf3"));
  expect(findTool("iperf3", join(dist, "anyperf"), `${dist}:${usr}`)).toBe(join(usr, "iperf3"));
  expect(findTool("iperf3", join(dist, "anyperf"), dist)).toBeUndefined();
});

test("a file that is not executable does not count", () => {
  const d = join(dir, "noexec");
  Bun.spawnSync(["mkdir", "-p", d]);
  writeFileSync(join(d, "netperf"), "");
  exe(join(d, "anyperf"));
  expect(findTool("netperf", join(d, "anyperf"), d)).toBeUndefined();
});
