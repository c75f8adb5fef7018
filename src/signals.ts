/**
 * Ctrl+C and SIGTERM end the run gracefully: the first one aborts this signal so every mode stops measuring and
 * prints and saves what it has; a second one exits at once (output logs still publish their last whole block, see
 * src/report/atomic-file.ts).
 *
 * Exit status after the first signal: 130 (SIGINT) / 143 (SIGTERM), as shells report a process killed by it, except
 * where the peer tool has its own convention (tests/signals/ check each):
 * - loopback, ntttcp (both dialects, once a test has started), netserver: 130 / 143. An ntttcp receiver that never
 *   saw a sender exits 1, as ntttcp-for-linux does before a test.
 * - iperf3 client and server: 1, after the summary and "iperf3: interrupt - the client/server has terminated".
 * - iperf (2): 0 for client and server, which take either signal as the end of the run.
 * - netperf: SIGINT and SIGALRM (scripts end long runs with `kill -ALRM`; netperf's own timer is SIGALRM) mean
 *   "time is up": the test's own status (0 when it reported); SIGTERM 143 after the report.
 * A client still connecting (a full backlog drops SYNs for up to 2 min) gives up at once: see unlessAborted.
 */
const controller = new AbortController();
let installed = false;

const EXIT_CODES: Partial<Record<NodeJS.Signals, number>> = { SIGINT: 130, SIGTERM: 143, SIGALRM: 142, SIGPIPE: 141, SIGIO: 1 };

function onSignal(name: NodeJS.Signals): void {
  if (controller.signal.aborted) process.exit(EXIT_CODES[name] ?? 130);
  controller.abort(name);
}

/**
 * Ends the run as the first Ctrl+C does, for a cause inside the process: stdout's reader left (SIGPIPE) or stdout
 * cannot be written (SIGIO); see src/std-streams.ts.
 */
export function endRun(reason: "SIGPIPE" | "SIGIO"): void {
  if (!controller.signal.aborted) controller.abort(reason);
}

export function shutdownSignal(): AbortSignal {
  if (!installed) {
    installed = true;
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
  }
  return controller.signal;
}

/** netperf: SIGALRM ends the run like SIGINT (without this, its default action kills the process, results unprinted). */
export function alarmEndsRun(): void {
  shutdownSignal();
  process.on("SIGALRM", onSignal);
}

/** Exit code for a run that a signal cut short (128 + signal number, as shells report it). */
export function interruptedExitCode(signal: AbortSignal): number | undefined {
  if (!signal.aborted) return undefined;
  return EXIT_CODES[signal.reason as NodeJS.Signals] ?? 130;
}

/** What unlessAborted rejects with: the run was interrupted while waiting (each mode says so in its own words). */
export class Interrupted extends Error {
  constructor() {
    super("interrupted");
  }
}

/**
 * `p`, unless `signal` aborts first: then rejects at once with Interrupted, and a value `p` still yields later goes
 * to `late` (close it). A connect to a host that drops SYNs (a full backlog, a firewall) takes up to 2 min to fail,
 * and Ctrl+C must not wait for it.
 */
export function unlessAborted<T>(p: Promise<T>, signal: AbortSignal, late: (v: T) => void): Promise<T> {
  if (signal.aborted) {
    p.then(late, () => {});
    return Promise.reject(new Interrupted());
  }
  return new Promise<T>((resolve, reject) => {
    let gaveUp = false;
    const onAbort = () => {
      gaveUp = true;
      reject(new Interrupted());
    };
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        if (gaveUp) late(v);
        else resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(e);
      },
    );
  });
}
