/**
 * deploy/kubernetes/fleet-test/base/run-plan.sh, the fleet Job's runner, under sh and (as in the image) busybox sh:
 * which plan lines a node runs, the options it passes, and the exit status when a pair fails. The anyperf it calls is
 * a recorder (ANYPERF_BIN), so this checks the runner's choices, not a measurement.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

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

function run(shell: string[], node: string, token?: string) {
  rmSync(join(dir, "calls"), { force: true });
  const r = Bun.spawnSync([...shell, SCRIPT], {
    env: { PATH: process.env.PATH ?? "", NODE_NAME: node, ANYPERF_PLAN: join(dir, "plan.txt"), ANYPERF_BIN: recorder, ANYPERF_CLIENT_OPTIONS: "-t 10", ...(token ? { ANYPERF_TOKEN: token } : {}) },
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
      const a = run(shell, "node-a", "s3cret");
      expect(a.code).toBe(0);
      expect(a.calls).toEqual([
        "client|10.0.0.2|--label|sender=node-a|--label|receiver=node-b|--token|s3cret|-t|10",
        "client|10.0.0.3|--label|sender=node-a|--label|receiver=node-c|--token|s3cret|-t|10|-P|4",
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
