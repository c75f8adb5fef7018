/**
 * The cross-compiled binaries and what runs them here: the arm64 build under qemu-user, the Windows exe under Wine,
 * the musl build with Debian's musl loader. A missing tool makes its tests skip (counted as skipped, never passed);
 * scripts/install-peers --platforms brings them (qemu-user, libc6-arm64-cross, wine64, gcc-mingw-w64-x86-64, musl).
 */
import { existsSync, mkdirSync, copyFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = new URL("../../", import.meta.url).pathname;

function which(cmd: string): string | undefined {
  const r = Bun.spawnSync(["sh", "-c", `command -v ${cmd}`], { stdout: "pipe" });
  const path = r.stdout.toString().trim();
  return r.exitCode === 0 && path ? path : undefined;
}

/** Builds dist/anyperf-<target> from the current source with scripts/build (the host's dist/anyperf too). */
export function buildTarget(target: "linux-arm64" | "linux-x64-musl" | "windows-x64"): string {
  const out = join(ROOT, "dist", `anyperf-${target}${target.startsWith("windows") ? ".exe" : ""}`);
  const r = Bun.spawnSync([join(ROOT, "scripts/build"), "--target", target], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`cross-compiling for ${target} failed: ${r.stderr.toString()}`);
  return out;
}

const ARM64_SYSROOT = "/usr/aarch64-linux-gnu";
const qemu = which("qemu-aarch64");
export const arm64Missing = !qemu ? "qemu-aarch64 not installed (scripts/install-peers --platforms)" : !existsSync(join(ARM64_SYSROOT, "lib/ld-linux-aarch64.so.1")) ? "libc6-arm64-cross not installed (scripts/install-peers --platforms)" : undefined;

/** argv that runs the arm64 binary under qemu-user with Debian's arm64 C library. */
export function arm64Command(bin: string, args: string[]): string[] {
  return [qemu!, "-L", ARM64_SYSROOT, bin, ...args];
}

/** The loader the musl build names as its interpreter (Debian's musl package links it to its libc). */
export const MUSL_LOADER = "/lib/ld-musl-x86_64.so.1";
export const muslMissing = !existsSync(MUSL_LOADER) ? `${MUSL_LOADER} absent: Debian's musl not installed (scripts/install-peers --platforms)` : undefined;

/**
 * Why the musl build cannot start here, undefined when it can. Bun's musl runtime links libstdc++.so.6 (and
 * libgcc_s) built against musl, as Alpine's libstdc++ package has them; Debian packages none, and glibc's copies
 * need glibc-only symbols (arc4random, __libc_single_threaded, _dl_find_object, ...).
 */
export function muslCannotRun(bin: string): string | undefined {
  const r = Bun.spawnSync([bin, "--version"], { stdout: "pipe", stderr: "pipe" });
  if (r.exitCode === 0) return undefined;
  const first = r.stderr.toString().split("\n")[0]?.trim() ?? "";
  return `the musl build does not start (exit ${r.exitCode}: ${first}): it needs a musl-built libstdc++.so.6 in the musl loader's path (Alpine: apk add libstdc++; Debian packages none)`;
}

const wine = which("wine64") ?? (existsSync("/usr/lib/wine/wine64") ? "/usr/lib/wine/wine64" : undefined);
const mingw = which("x86_64-w64-mingw32-gcc");
export const windowsMissing = !wine ? "wine64 not installed (scripts/install-peers --platforms)" : !mingw ? "mingw-w64 not installed (scripts/install-peers --platforms)" : undefined;

export interface WineHost {
  /** The exe copied beside the stub DLL, in a Wine prefix of this test's own. */
  exe: string;
  env: Record<string, string>;
  command(args: string[]): string[];
}

/**
 * A Wine prefix of the test's own, with the exe beside a stub bcryptprimitives.dll (Wine 8.0 lacks ProcessPrng;
 * Windows itself has it). The first start of a prefix takes ~10 s (wineboot).
 */
export function wineHost(exe: string): WineHost {
  const dir = mkdtempSync(join(tmpdir(), "anyperf-wine-"));
  const here = new URL(".", import.meta.url).pathname;
  const dll = Bun.spawnSync([mingw!, "-shared", "-O2", "-o", join(dir, "bcryptprimitives.dll"), join(here, "bcryptprimitives.c"), join(here, "bcryptprimitives.def"), "-ladvapi32"], { stdout: "pipe", stderr: "pipe" });
  if (dll.exitCode !== 0) throw new Error(`building the ProcessPrng stub failed: ${dll.stderr.toString()}`);
  const local = join(dir, "anyperf.exe");
  copyFileSync(exe, local);
  const prefix = join(dir, "prefix");
  mkdirSync(prefix);
  const env = { ...process.env, WINEPREFIX: prefix, WINEDEBUG: "-all" } as Record<string, string>;
  Bun.spawnSync([wine!, "wineboot", "-i"], { env, stdout: "ignore", stderr: "ignore" });
  return { exe: local, env, command: (args) => [wine!, local, ...args] };
}
