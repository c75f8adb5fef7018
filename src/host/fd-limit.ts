import { UserError } from "../errors.ts";
import { loadLibc } from "../sockopt/libc.ts";

/** RLIMIT_NOFILE on Linux (x86-64 and arm64 alike). */
const RLIMIT_NOFILE = 7;
/** Beyond the sockets: the binary, Workers' event loops and pipes, /proc readers, the status endpoint. */
const RESERVE_FDS = 256;

/**
 * Descriptors one process holds at its peak for `streams` flows, with `ends` the halves of each flow it runs (loopback:
 * both). A sending or connecting end is one socket. A receiving TCP stream's listener closes once its one connection
 * is accepted, so that end is one descriptor too; TCP_CRR's server keeps its listener beside the connection it serves.
 */
export function fdsNeeded(streams: number, test: "stream" | "rr" | "crr", ends: { sends: boolean; receives: boolean }): number {
  const perStream = (ends.sends ? 1 : 0) + (ends.receives ? (test === "crr" ? 2 : 1) : 0);
  return streams * perStream + RESERVE_FDS;
}

/**
 * Raises this process's open-file limit to `needed` where it can (the soft limit up to the hard one; the hard one
 * too when privileged), so many flows fail up front with the fix named rather than minutes into setting them up.
 * Without bun:ffi (Deno, musl) the limit is left as it is and a connect that runs out says EMFILE in its own words.
 */
export async function ensureFdLimit(needed: number, flag: string, otherFix?: string): Promise<void> {
  const c = await loadLibc();
  if (!c) return;
  const lim = new BigUint64Array(2);
  if (c.getrlimit(RLIMIT_NOFILE, lim) !== 0 || lim[0]! >= BigInt(needed)) return;
  const want = BigInt(needed);
  const hard = lim[1]! >= want ? lim[1]! : want;
  // First soft and hard together (allowed with CAP_SYS_RESOURCE), then the soft limit alone up to the hard one.
  if (c.setrlimit(RLIMIT_NOFILE, new BigUint64Array([want, hard])) !== 0 && lim[1]! > lim[0]!) {
    c.setrlimit(RLIMIT_NOFILE, new BigUint64Array([lim[1]! < want ? lim[1]! : want, lim[1]!]));
  }
  c.getrlimit(RLIMIT_NOFILE, lim);
  if (lim[0]! < want) {
    throw new UserError(`${flag} needs about ${needed} open files and this process may have ${lim[0]}: raise the limit (ulimit -n ${needed})${otherFix ? `, ${otherFix}` : ""} or run fewer streams`);
  }
}
