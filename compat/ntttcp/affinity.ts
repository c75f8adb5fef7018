import { loadSockopt } from "../../src/sockopt/sockopt.ts";
import type { LogLevel } from "./run.ts";

/**
 * ntttcp-for-linux pins its whole process (main thread, inherited by every thread) to the -m CPU. The data streams
 * get that CPU through their StreamSpecs; this pins the main thread, which runs the sync and control work.
 */
export async function pinMainThread(cpu: number, log: (level: LogLevel, text: string) => void): Promise<void> {
  const sockopt = await loadSockopt();
  try {
    if (!sockopt) throw new Error("this runtime offers no sched_setaffinity");
    sockopt.pinThread(cpu);
    log("INFO", "main: set cpu affinity");
  } catch (e) {
    log("ERR", `main: cannot set cpu affinity (${(e as Error).message})`);
  }
}
