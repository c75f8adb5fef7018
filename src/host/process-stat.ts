/** The figures we use from /proc/<pid>/stat (man 5 proc). */
export interface ProcessStat {
  pid: number;
  comm: string;
  state: string;
  /** CPU time in user and kernel mode, all threads, in USER_HZ clock ticks. */
  utime: number;
  stime: number;
  numThreads: number;
}

/** USER_HZ: the unit of /proc tick counts, fixed at 100 by the kernel ABI on every architecture we build for. */
export const USER_HZ = 100;

/**
 * Parses /proc/<pid>/stat. The command name is in parentheses and may itself hold spaces and parentheses, so the
 * numeric fields are counted from the LAST ')' in the line.
 */
export function parseProcessStat(text: string): ProcessStat | undefined {
  const open = text.indexOf("(");
  const close = text.lastIndexOf(")");
  if (open < 0 || close < open) return undefined;
  const pid = Number(text.slice(0, open).trim());
  // After ")": field 3 (state) is index 0, so field n is index n - 3.
  const rest = text.slice(close + 1).trim().split(/\s+/);
  const field = (n: number) => Number(rest[n - 3]);
  const state = rest[0] ?? "";
  const utime = field(14);
  const stime = field(15);
  const numThreads = field(20);
  if (!Number.isInteger(pid) || !Number.isFinite(utime) || !Number.isFinite(stime) || state === "") return undefined;
  return { pid, comm: text.slice(open + 1, close), state, utime, stime, numThreads };
}
