/**
 * The stock peers an interop test can pair with: the system's own (Debian bookworm: iperf3 3.12, iperf 2.1.8) and
 * Debian trixie's newer ones (iperf3 3.18, iperf 2.2.1), which scripts/install-trixie-peers unpacks beside them
 * under ${ANYPERF_PEERS:-~/.cache/anyperf/peers}/trixie/bin. Each peer is found by running its `-v`; one that is
 * missing is skipped by its tests, with the reason in their names, never passed.
 */
import { homedir } from "node:os";
import { join } from "node:path";

export interface StockPeer {
  /** "iperf3 3.18 (Debian trixie)": goes into test names. */
  label: string;
  /** The command that runs it (a path or a name on PATH). */
  command: string;
  /** Its version as it prints it ("3.18", "2.2.1"), or undefined when it does not run. */
  version: string | undefined;
  /** True for the system's own peer, whose tests run everything; false for a newer one, which runs the key pairings. */
  system: boolean;
}

type Tool = "iperf3" | "iperf";

/** What `-v` prints before the version (iperf 2 prints it on stderr and exits 1). */
const VERSION: Record<Tool, RegExp> = { iperf3: /^iperf (3\.[\d.]+\+?)/m, iperf: /iperf version (2\.\d+\.[\dn]+)/ };

const trixieBin = (tool: Tool): string => join(process.env.ANYPERF_PEERS ?? join(homedir(), ".cache", "anyperf", "peers"), "trixie", "bin", tool);

function versionOf(tool: Tool, command: string): string | undefined {
  try {
    const r = Bun.spawnSync([command, "-v"], { stdout: "pipe", stderr: "pipe" });
    return VERSION[tool].exec(r.stdout.toString() + r.stderr.toString())?.[1];
  } catch {
    return undefined;
  }
}

function peer(tool: Tool, command: string, system: boolean, origin: string): StockPeer {
  const version = versionOf(tool, command);
  const label = version ? `${tool} ${version} (${origin})` : `${tool} of ${origin} (not installed: run scripts/install-peers)`;
  return { label, command, version, system };
}

/**
 * An iperf3 built from esnet/iperf's newest source, for local checks beside the packaged ones: named by
 * ANYPERF_IPERF3_NEWEST (its path); listed only when set, so a machine without it counts nothing for it.
 */
const newestIperf3 = (): StockPeer[] => {
  const path = process.env.ANYPERF_IPERF3_NEWEST;
  return path ? [peer("iperf3", path, false, "built from esnet/iperf")] : [];
};

/** The system's iperf3, then trixie's, then a newest build where ANYPERF_IPERF3_NEWEST names one. */
export const iperf3Peers = (): StockPeer[] => [peer("iperf3", "iperf3", true, "system"), peer("iperf3", trixieBin("iperf3"), false, "Debian trixie"), ...newestIperf3()];

/**
 * An iperf 2 built from the newest source (harrycheng1/iperf2-mirror's master: "2.2.n"), named by
 * ANYPERF_IPERF2_NEWEST as the iperf3 one is; listed only when set.
 */
const newestIperf2 = (): StockPeer[] => {
  const path = process.env.ANYPERF_IPERF2_NEWEST;
  return path ? [peer("iperf", path, false, "built from iperf2 master")] : [];
};

/** The system's iperf 2, then trixie's, then a newest build where ANYPERF_IPERF2_NEWEST names one. */
export const iperf2Peers = (): StockPeer[] => [peer("iperf", "iperf", true, "system"), peer("iperf", trixieBin("iperf"), false, "Debian trixie"), ...newestIperf2()];
