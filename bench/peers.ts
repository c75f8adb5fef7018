import { accessSync, constants, realpathSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, join } from "node:path";
import type { Peers } from "./workloads.ts";

/**
 * A stock tool on PATH. anyperf's own links (dist/iperf3, dist/ntttcp, ...) are skipped wherever they sit on PATH:
 * benchmarking anyperf against itself would say nothing.
 */
export function findTool(name: string, anyperf: string, path = process.env.PATH ?? ""): string | undefined {
  const self = realpathSync(anyperf);
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    const candidate = executable(join(dir, name));
    if (candidate && realpathSync(candidate) !== self) return candidate;
  }
  return undefined;
}

function executable(path: string): string | undefined {
  try {
    accessSync(path, constants.X_OK);
    return path;
  } catch {
    return undefined;
  }
}

export function findPeers(anyperf: string): Peers {
  const find = (n: string) => findTool(n, anyperf);
  const trixieIperf3 = join(process.env.ANYPERF_PEERS || join(homedir(), ".cache", "anyperf", "peers"), "trixie", "bin", "iperf3");
  return { iperf3: find("iperf3"), iperf3Threads: executable(trixieIperf3), iperf: find("iperf"), netperf: find("netperf"), netserver: find("netserver"), ntttcp: find("ntttcp"), taskset: find("taskset"), chrt: find("chrt"), flent: find("flent"), neper: process.env.NEPER || find("tcp_rr"), sockperf: find("sockperf") };
}

/** First line a tool prints about its version (iperf 2 prints it on stderr), for the report. */
export function toolVersion(argv: string[]): string {
  const r = Bun.spawnSync(argv, { stdin: "ignore", stdout: "pipe", stderr: "pipe", timeout: 5_000 });
  const text = `${r.stdout.toString()}\n${r.stderr.toString()}`.trim();
  return text.split("\n")[0]?.trim() || "unknown";
}
