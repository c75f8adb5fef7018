/**
 * Peak resident set size from /proc/<pid>/status (VmHWM, kB). The bench reads this rather than wait4's ru_maxrss:
 * Linux carries the spawning process's high-water mark into a child across exec (Bun spawns with vfork), so
 * ru_maxrss of a child of the bench is never below the bench's own peak.
 */
export function vmHwmBytes(statusText: string): number | undefined {
  const kb = /^VmHWM:\s+(\d+) kB$/m.exec(statusText)?.[1];
  return kb === undefined ? undefined : Number(kb) * 1024;
}
