/**
 * Ctrl+C and SIGTERM end the run gracefully: the first one aborts this signal so every mode stops measuring and
 * prints and saves what it has; a second one exits at once.
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
