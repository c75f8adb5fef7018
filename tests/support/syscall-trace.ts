/**
 * Which system calls a running process of ours makes, by strace attached to all its threads (Workers included):
 * for options the kernel does not keep, so no getsockopt can show they were set (TCP_QUICKACK is dropped by the kernel
 * itself; a program that "sets" it must set it again and again). Detaching leaves the process running.
 */
import { readFileSync } from "node:fs";
import { hasTool } from "./processes.ts";

export const hasStrace = (): boolean => hasTool(["strace", "-V"], /strace -- version/);

export interface Trace {
  /** Lines strace wrote so far, each "TID call(args) = result". */
  lines(): string[];
  /** Detaches (the process goes on) and waits for strace to exit. */
  stop(): Promise<void>;
}

/** Attaches to `pid` for the calls in `calls` (strace's -e trace= list); resolves once every thread is attached. */
export async function traceCalls(pid: number, calls: string, file: string): Promise<Trace> {
  const p = Bun.spawn(["strace", "-f", "-p", String(pid), "-e", `trace=${calls}`, "-o", file], { stdout: "ignore", stderr: "pipe" });
  let err = "";
  void (async () => {
    for await (const chunk of p.stderr) err += new TextDecoder().decode(chunk);
  })();
  const end = Date.now() + 5000;
  // strace says "Process N attached" per thread, the main one first.
  while (!/attached/.test(err)) {
    if (p.exitCode !== null || Date.now() > end) throw new Error(`strace did not attach to ${pid}: ${err}`);
    await Bun.sleep(20);
  }
  await Bun.sleep(200);
  return {
    lines: () => readFileSync(file, "utf8").split("\n").filter((l) => l !== ""),
    stop: async () => {
      p.kill("SIGINT");
      await p.exited;
    },
  };
}
