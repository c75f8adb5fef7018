/**
 * A child cgroup with a CPU quota, for a test that puts a server under a pod-like CPU limit: cgroup v1's cpu
 * controller where it is mounted (this machine: a hybrid host whose v2 tree has no cpu controller), else v2's
 * cpu.max. Named apdiag-*, removed at teardown once the processes in it have ended.
 */
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sleep } from "./processes.ts";

const V1 = "/sys/fs/cgroup/cpu";
const V2 = "/sys/fs/cgroup";

export interface QuotaCgroup {
  dir: string;
  /** Moves a running process (every thread) into the cgroup. */
  add(pid: number): void;
  /** Removes the cgroup once what ran in it is gone (the caller ends its processes first). */
  remove(): Promise<void>;
}

const readable = (p: string) => {
  try {
    return readFileSync(p, "latin1");
  } catch {
    return undefined;
  }
};

/** Why a CPU quota cgroup cannot be made here, or undefined. */
export function cgroupSkipReason(): string | undefined {
  if (process.platform !== "linux") return "cgroups need Linux";
  if (process.getuid?.() !== 0) return "making a cgroup needs root";
  if (existsSync(join(V1, "cpu.cfs_quota_us"))) return undefined;
  if (readable(join(V2, "cgroup.controllers"))?.split(/\s+/).includes("cpu")) return undefined;
  return "no cgroup v1 cpu controller nor cgroup v2 cpu controller mounted";
}

/** A cgroup limited to `cores` of CPU (e.g. 0.05: 5 ms per 100 ms period). */
export function makeQuotaCgroup(name: string, cores: number): QuotaCgroup {
  const v1 = existsSync(join(V1, "cpu.cfs_quota_us"));
  const dir = join(v1 ? V1 : V2, `apdiag-${process.pid}-${name}`);
  mkdirSync(dir);
  const period = 100_000;
  if (v1) {
    writeFileSync(join(dir, "cpu.cfs_period_us"), String(period));
    writeFileSync(join(dir, "cpu.cfs_quota_us"), String(Math.round(cores * period)));
  } else {
    if (!readable(join(V2, "cgroup.subtree_control"))?.includes("cpu")) writeFileSync(join(V2, "cgroup.subtree_control"), "+cpu");
    writeFileSync(join(dir, "cpu.max"), `${Math.round(cores * period)} ${period}`);
  }
  return {
    dir,
    add: (pid) => writeFileSync(join(dir, "cgroup.procs"), String(pid)),
    async remove() {
      // A killed process leaves its cgroup once it has exited; rmdir refuses until then.
      for (let i = 0; i < 100 && existsSync(dir); i++) {
        try {
          rmdirSync(dir);
        } catch {
          await sleep(50);
        }
      }
    },
  };
}
