/**
 * deploy/kubernetes/fleet-test/base/run-plan.sh, the fleet Job's runner, under sh and (as in the image) busybox sh:
 * which plan lines a node runs, the options it passes, and the exit status when a pair fails. The anyperf it calls is
 * a recorder (ANYPERF_BIN), so this checks the runner's choices; the last test runs it with the real binary against
 * a real serve on loopback, the token passed only in the environment.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePorts, hasTool, spawnProc, waitBound } from "../support/processes.ts";

const SCRIPT = join(import.meta.dir, "../../deploy/kubernetes/fleet-test/base/run-plan.sh");
const dir = mkdtempSync(join(tmpdir(), "anyperf-plan-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const recorder = join(dir, "anyperf");
// One line per call, the arguments joined by '|'; the address "fail" exits 3, as a failed test does.
writeFileSync(recorder, `#!/bin/sh\nIFS='|'; echo "$*" >> "${join(dir, "calls")}"\n[ "$2" = fail ] && exit 3\nexit 0\n`, { mode: 0o755 });
writeFileSync(
  join(dir, "plan.txt"),
  ["# SENDER RECEIVER ADDRESS [options]", "", "node-a node-b 10.0.0.2", "node-b node-a 10.0.0.1 -u -l 64", "* node-c 10.0.0.3 -P 4", "node-a node-a 10.0.0.1", "node-c node-b fail", ""].join("\n"),
);

function run(shell: string[], node: string) {
  rmSync(join(dir, "calls"), { force: true });
  const r = Bun.spawnSync([...shell, SCRIPT], {
    env: { PATH: process.env.PATH ?? "", NODE_NAME: node, ANYPERF_PLAN: join(dir, "plan.txt"), ANYPERF_BIN: recorder, ANYPERF_CLIENT_OPTIONS: "-t 10" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const calls = existsSync(join(dir, "calls")) ? readFileSync(join(dir, "calls"), "utf8").trim().split("\n") : [];
  return { code: r.exitCode, calls, out: r.stdout.toString() };
}

const SHELLS: [string, string[], boolean][] = [
  ["sh", ["sh"], true],
  ["busybox sh", ["busybox", "sh"], existsSync("/bin/busybox")],
];

for (const [name, shell, have] of SHELLS) {
  describe.skipIf(!have)(`run-plan.sh under ${name}`, () => {
    test("a node runs its own lines and the '*' lines, never one aimed at itself, labelled with the pair", () => {
      const a = run(shell, "node-a");
      expect(a.code).toBe(0);
      expect(a.calls).toEqual([
        "client|10.0.0.2|--label|sender=node-a|--label|receiver=node-b|-t|10",
        "client|10.0.0.3|--label|sender=node-a|--label|receiver=node-c|-t|10|-P|4",
      ]);
      expect(a.out).toContain("plan: node-a ran 2 pairs, 0 failed");
      const b = run(shell, "node-b");
      expect(b.calls).toEqual([
        "client|10.0.0.1|--label|sender=node-b|--label|receiver=node-a|-t|10|-u|-l|64",
        "client|10.0.0.3|--label|sender=node-b|--label|receiver=node-c|-t|10|-P|4",
      ]);
    });

    test("a failed pair makes the pod fail, and the summary counts it", () => {
      const c = run(shell, "node-c");
      expect(c.calls).toEqual(["client|fail|--label|sender=node-c|--label|receiver=node-b|-t|10"]);
      expect(c.out).toContain("plan: node-c ran 1 pairs, 1 failed");
      expect(c.code).toBe(1);
    });

    test("without NODE_NAME it refuses, naming the variable", () => {
      const r = Bun.spawnSync([...shell, SCRIPT], { env: { PATH: process.env.PATH ?? "", ANYPERF_PLAN: join(dir, "plan.txt"), ANYPERF_BIN: recorder }, stderr: "pipe" });
      expect(r.exitCode).not.toBe(0);
      expect(r.stderr.toString()).toContain("NODE_NAME");
    });
  });
}

const BIN = join(import.meta.dir, "../../dist/anyperf");
// --label and ANYPERF_TOKEN come with the fleet identity work; until the binary has them this run is skipped.
const HAS_LABEL = existsSync(BIN) && hasTool([BIN, "client", "--help"], /--label/);
if (!HAS_LABEL) console.warn("run-plan.sh live run skipped: dist/anyperf has no --label yet");

describe.skipIf(!HAS_LABEL)("run-plan.sh with the real anyperf", () => {
  test("one pair measured against a serve that wants a token, the token only in ANYPERF_TOKEN", async () => {
    // Inside the kernel's ephemeral range: a port no connection holds right now.
    const port = freePorts(41060, 41100, 1);
    const serve = spawnProc([BIN, "serve", "-p", String(port), "--iperf3", "off", "--iperf", "off", "--netserver", "off", "--ntttcp", "off", "--token", "s3cret"], 60_000);
    try {
      await waitBound(port, "tcp", 20_000).catch((e: Error) => {
        throw new Error(`${e.message}\n--- serve stderr ---\n${serve.stderr()}`);
      });
      writeFileSync(join(dir, "live.txt"), "node-a node-b 127.0.0.1\n");
      const r = Bun.spawnSync(["sh", SCRIPT], {
        env: { PATH: process.env.PATH ?? "", NODE_NAME: "node-a", ANYPERF_PLAN: join(dir, "live.txt"), ANYPERF_BIN: BIN, ANYPERF_TOKEN: "s3cret", ANYPERF_CLIENT_OPTIONS: `-p ${port} -t 1` },
        stdout: "pipe",
        stderr: "pipe",
      });
      const out = r.stdout.toString();
      expect(r.stderr.toString()).toBe("");
      expect(out).toContain("plan: node-a ran 1 pairs, 0 failed");
      expect(out).toMatch(/\[SUM\].*bit\/s/);
      expect(r.exitCode).toBe(0);
    } finally {
      serve.kill("SIGINT");
      await serve.done;
    }
  }, 60_000);
});
