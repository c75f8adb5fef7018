import { readFile } from "node:fs/promises";
import { USER_HZ, parseProcessStat } from "../src/host/process-stat.ts";

/**
 * CPU of the processes `pid` forks, sampled every 50 ms from /proc while they run: the stock netserver reaps its
 * forked test children without wait4's accounting (its rusage showed 0 % CPU for four tests), so their time is read
 * from their own /proc/<child>/stat, the last sample before each exits (up to 50 ms of a child's end is missed).
 */
export function watchChildCpu(pid: number): { stop: () => number } {
  const last = new Map<number, number>();
  const sample = async () => {
    const list = await readFile(`/proc/${pid}/task/${pid}/children`, "utf8").catch(() => "");
    for (const child of list.split(/\s+/).filter(Boolean).map(Number)) {
      const st = parseProcessStat(await readFile(`/proc/${child}/stat`, "utf8").catch(() => ""));
      if (st) last.set(child, (st.utime + st.stime) / USER_HZ);
    }
  };
  const timer = setInterval(() => void sample(), 50);
  return {
    stop: () => {
      clearInterval(timer);
      let s = 0;
      for (const v of last.values()) s += v;
      return s;
    },
  };
}
