import { readFile } from "node:fs/promises";
import { listeningPorts } from "./proc-net.ts";
import { vmHwmBytes } from "./proc-status.ts";

/**
 * Child processes of the bench. Every one has a deadline, is tracked until it has exited, and is only ever
 * signalled by its own pid; `stopAll` ends whatever is still running when the bench itself is interrupted.
 */

export interface Finished {
  argv: string[];
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  /** user + system CPU of the process and of the children it reaped (wait4 rusage, as /usr/bin/time reports). */
  cpuSeconds: number;
  /** Highest VmHWM read while it ran (only when asked for with `watchRss`); see proc-status.ts. */
  peakRssBytes?: number;
  wallMs: number;
  timedOut: boolean;
}

export class Child {
  readonly done: Promise<Finished>;
  private readonly proc: Bun.Subprocess<"ignore", "pipe", "pipe">;
  private timedOut = false;
  private exited = false;

  constructor(readonly argv: string[], deadlineMs: number, opts: { watchRss?: boolean } = {}) {
    const t0 = performance.now();
    const proc = Bun.spawn(argv, { stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    this.proc = proc;
    live.add(this);
    const deadline = setTimeout(() => {
      this.timedOut = true;
      void this.stop();
    }, deadlineMs);
    let peakRss: number | undefined;
    // VmHWM only rises, so the last read before exit is the peak up to then; 20 ms keeps the unseen tail short.
    const watcher = opts.watchRss
      ? setInterval(() => {
          readFile(`/proc/${proc.pid}/status`, "utf8").then((t) => {
            const b = vmHwmBytes(t);
            if (b !== undefined) peakRss = Math.max(peakRss ?? 0, b);
          }, () => {});
        }, 20)
      : undefined;
    const stdout = new Response(proc.stdout).text();
    const stderr = new Response(proc.stderr).text();
    this.done = (async () => {
      await proc.exited;
      this.exited = true;
      clearTimeout(deadline);
      clearInterval(watcher);
      live.delete(this);
      const ru = proc.resourceUsage();
      return {
        argv,
        exitCode: proc.exitCode,
        signal: proc.signalCode === null ? null : String(proc.signalCode),
        stdout: await stdout,
        stderr: await stderr,
        cpuSeconds: ru ? Number(ru.cpuTime.total) / 1e6 : 0,
        peakRssBytes: peakRss,
        wallMs: performance.now() - t0,
        timedOut: this.timedOut,
      };
    })();
  }

  get pid(): number {
    return this.proc.pid;
  }

  get running(): boolean {
    return !this.exited;
  }

  /** SIGTERM, then SIGKILL if it is still there after `graceMs`. */
  async stop(graceMs = 1500): Promise<Finished> {
    if (!this.exited) {
      this.proc.kill("SIGTERM");
      const killer = setTimeout(() => {
        if (!this.exited) this.proc.kill("SIGKILL");
      }, graceMs);
      await this.proc.exited;
      clearTimeout(killer);
    }
    return this.done;
  }

  /** Waits up to `ms` for a process that ends by itself (iperf3 -s -1, a client), then stops it. */
  async finish(ms: number): Promise<Finished> {
    const t = await Promise.race([this.done, Bun.sleep(ms).then(() => undefined)]);
    return t ?? this.stop();
  }
}

const live = new Set<Child>();

export async function stopAll(): Promise<void> {
  await Promise.all([...live].map((c) => c.stop(500)));
}

/** The run's error, or nothing when the process exited 0 by itself. */
export function failure(f: Finished): string | undefined {
  if (f.timedOut) return `${show(f.argv)}: no result within its deadline`;
  if (f.exitCode === 0) return undefined;
  const why = (f.stderr.trim() || f.stdout.trim()).split("\n").slice(-2).join(" | ").slice(0, 200);
  return `${show(f.argv)} exited ${f.exitCode ?? f.signal}${why ? `: ${why}` : ""}`;
}

export function show(argv: string[]): string {
  return argv.map((a) => a.replace(/^.*\/dist\/anyperf$/, "anyperf")).join(" ");
}

/** Resolves once something listens on TCP `port` (IPv4 or IPv6); rejects if `server` dies or time runs out. */
export async function waitListening(port: number, server: Child, timeoutMs = 5000): Promise<void> {
  const end = performance.now() + timeoutMs;
  for (;;) {
    const texts = await Promise.all(["/proc/net/tcp", "/proc/net/tcp6"].map((p) => readFile(p, "utf8").catch(() => "")));
    if (texts.some((t) => listeningPorts(t).has(port))) return;
    if (!server.running) {
      const f = await server.done;
      throw new Error(failure(f) ?? `${show(f.argv)} exited before listening on ${port}`);
    }
    if (performance.now() > end) {
      await server.stop();
      throw new Error(`${show(server.argv)}: not listening on ${port} after ${timeoutMs} ms`);
    }
    await Bun.sleep(20);
  }
}

/** Fixed server ports come from this bench's range only (docs: 24600-24699); blocks wrap around. */
export class Ports {
  private next = 0;
  constructor(private readonly first = 24600, private readonly count = 100) {}
  take(n = 1): number {
    if (this.next + n > this.count) this.next = 0;
    const p = this.first + this.next;
    this.next += n;
    return p;
  }
}
