/** Waits for `p`, at most `ms` or until aborted; the timer is cleared either way so it never holds the process. */
export function within(p: Promise<unknown>, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(t);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const t = setTimeout(done, Math.max(0, ms));
    signal.addEventListener("abort", done, { once: true });
    void p.then(done, done);
  });
}

export const sleep = (ms: number, signal: AbortSignal): Promise<void> => within(new Promise<void>(() => {}), ms, signal);
