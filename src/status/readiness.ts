/**
 * /readyz and POST /start: the two places where the status endpoint steers, not only shows. Process-wide because
 * the endpoint starts (main.ts) before the mode that knows its listeners or its start (serve, client) has run.
 */

let ready = true;

/** serve holds readiness from before the endpoint listens until all its listeners are bound. */
export function holdReadiness(): void {
  ready = false;
}

export function markReady(): void {
  ready = true;
}

export function isReady(): boolean {
  return ready;
}

let startRoute = false;
let release: (() => void) | undefined;

/** The status endpoint is up, so POST /start can reach a --paused client. */
export function enableStartRoute(): void {
  startRoute = true;
}

export function startRouteEnabled(): boolean {
  return startRoute;
}

/** Resolves at POST /start; false when the signal (Ctrl+C) came first. */
export function waitForStart(signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    const onAbort = () => {
      release = undefined;
      resolve(false);
    };
    signal.addEventListener("abort", onAbort, { once: true });
    release = () => {
      release = undefined;
      signal.removeEventListener("abort", onAbort);
      resolve(true);
    };
  });
}

/** POST /start: true when a paused test was waiting and now starts. */
export function releaseStart(): boolean {
  if (!release) return false;
  release();
  return true;
}

/** Tests reset the process-wide state between cases. */
export function resetReadiness(): void {
  ready = true;
  startRoute = false;
  release = undefined;
}
