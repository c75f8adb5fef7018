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
 * - netperf: SIGINT means "time is up": the test's own status (0 when it reported); SIGTERM 143 after the report.
 */
const controller = new AbortController();
let installed = false;

export function shutdownSignal(): AbortSignal {
  if (!installed) {
    installed = true;
    const onSignal = (name: NodeJS.Signals) => {
      if (controller.signal.aborted) process.exit(name === "SIGINT" ? 130 : 143);
      controller.abort(name);
    };
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
  }
  return controller.signal;
}

/** Exit code for a run that a signal cut short (128 + signal number, as shells report it). */
export function interruptedExitCode(signal: AbortSignal): number | undefined {
  if (!signal.aborted) return undefined;
  return signal.reason === "SIGTERM" ? 143 : 130;
}
