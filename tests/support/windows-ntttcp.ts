import { existsSync } from "node:fs";
import { dirname, join } from "node:path";

/**
 * The real NTttcp for Windows 5.40 under Wine, when built (scripts/install-peers --windows-ntttcp, or by hand):
 * WINDOWS_NTTTCP=/path/ntttcp.exe (WINEPREFIX defaults to the `wineprefix` beside its build directory), else the
 * build under /work/peers/windows-ntttcp. Tests that need it are skipped when it is absent.
 */

const KNOWN = "/work/peers/windows-ntttcp/build/ntttcp.exe";

function wineLoader(): string | undefined {
  const onPath = Bun.which("wine") ?? Bun.which("wine64");
  if (onPath) return onPath;
  return existsSync("/usr/lib/wine/wine64") ? "/usr/lib/wine/wine64" : undefined;
}

function find(): { exe: string; wine: string; env: Record<string, string> } | undefined {
  const exe = process.env.WINDOWS_NTTTCP ?? (existsSync(KNOWN) ? KNOWN : undefined);
  const wine = wineLoader();
  if (!exe || !existsSync(exe) || !wine) return undefined;
  const prefix = process.env.WINEPREFIX ?? join(dirname(dirname(exe)), "wineprefix");
  return { exe, wine, env: { WINEPREFIX: prefix, WINEDEBUG: "-all", NTTTCP_COMPAT_QUIET: "1" } };
}

export const windowsNtttcp = find();

export interface WindowsRun {
  done: Promise<{ code: number; stdout: string; stderr: string }>;
  kill(): void;
}

/** Runs the real ntttcp.exe with these arguments (cwd for its -xml file). */
export function runWindowsNtttcp(args: string[], cwd?: string): WindowsRun {
  const w = windowsNtttcp;
  if (!w) throw new Error("the real Windows NTttcp is not built: set WINDOWS_NTTTCP");
  const p = Bun.spawn([w.wine, w.exe, ...args], { stdout: "pipe", stderr: "pipe", cwd, env: { ...process.env, ...w.env } });
  const done = (async () => {
    const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
    return { code, stdout, stderr };
  })();
  return { done, kill: () => p.kill() };
}
