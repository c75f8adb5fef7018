/**
 * setTimeout takes at most 2^31-1 ms (about 24.8 days); a longer delay is replaced by 1 ms with a warning on
 * stderr. Deadlines derived from a peer's test length (netperf -l 2^31-1, iperf 2 -t 21474836) go past that, so a
 * timer re-armed to such a deadline would fire every millisecond. Callers wait the capped delay and re-check.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** The delay to pass to setTimeout for a deadline at `atMs` (same clock as `nowMs`): 0..MAX_TIMER_MS. */
export function timerDelay(atMs: number, nowMs: number): number {
  const d = atMs - nowMs;
  if (!(d > 0)) return 0;
  return Math.min(MAX_TIMER_MS, d);
}
