/**
 * `anyperf serve` in its own process for the serve tests: the built binary when there is one (./scripts/build;
 * ./scripts/test builds it first), else main.ts from source. Its listener lines say when it is ready.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { hasTool, spawnProc, waitFor, type Proc } from "../support/processes.ts";

const BIN = join(import.meta.dir, "../../dist/anyperf");
const MAIN = join(import.meta.dir, "../../main.ts");

export const anyperf = (): string[] => (existsSync(BIN) ? [BIN] : [process.execPath, MAIN]);

/** Test ports sit in 30000-30999: Windows token ports at data port + 100 instead of + 1000. */
export const TOKEN_OFFSET = 100;

export function spawnServe(args: string[], limitMs = 90_000): Proc {
  return spawnProc([...anyperf(), "serve", ...args], limitMs, { ANYPERF_NTTTCP_TOKEN_OFFSET: String(TOKEN_OFFSET) });
}

/** Ready once it printed a line for each of `count` listeners ("iperf3 on 127.0.0.1:30201"). */
export async function serveReady(p: Proc, count: number, ms = 15_000): Promise<void> {
  const listening = () => p.stdout().split("\n").filter((l) => /^\w+ on \S*:\d+/.test(l)).length;
  await waitFor(() => (listening() >= count ? "ready" : p.stdout() + p.stderr()), /^ready$/, ms);
}

/** Stock ntttcp-for-linux: env NTTTCP_LINUX, else `ntttcp` on PATH when it is not anyperf's own link. */
export function ntttcpLinux(): string | undefined {
  const fromEnv = process.env.NTTTCP_LINUX;
  if (fromEnv && existsSync(fromEnv)) return fromEnv;
  // -h only prints (-V alone would start a receiver); anyperf's own link prints no author line.
  return hasTool(["ntttcp", "-h"], /NTTTCP for Linux[\s\S]*Author:/) ? "ntttcp" : undefined;
}

export const hasStock = (): boolean => hasTool(["iperf3", "-v"], /iperf 3\./) && hasTool(["iperf", "-v"], /iperf version 2\./) && hasTool(["netperf", "-V"], /Netperf version/);

/** Numbers of the lines matching `re` (capture group 1). */
export function figures(text: string, re: RegExp): number[] {
  return [...text.matchAll(new RegExp(re, "g"))].map((m) => Number(m[1]));
}
