import { UserError } from "../errors.ts";

/**
 * `--start-at RFC3339`: N clients started by a scheduler seconds apart all begin at one instant, so a fleet's packet
 * rate is measured with every sender running. Time zones must be explicit: "10:00" on a node in another zone would
 * start an hour off.
 */

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;
/** A start this far past is the clock or the plan being wrong, not a slow scheduler. */
const MAX_LATE_MS = 1_000;
const MAX_AHEAD_MS = 24 * 3600_000;

/** The start instant in ms since the epoch; refused when malformed, past by over a second, or over 24 h ahead. */
export function parseStartAt(text: string, nowMs: number): number {
  const at = RFC3339.test(text) ? Date.parse(text.replace(" ", "T")) : NaN;
  if (Number.isNaN(at)) throw new UserError(`--start-at ${text}: not an RFC 3339 time; pass e.g. 2026-12-03T12:00:00Z or 2026-12-03T13:00:00+01:00`, 2);
  if (at < nowMs - MAX_LATE_MS) {
    throw new UserError(`--start-at ${text}: that was ${((nowMs - at) / 1000).toFixed(1)} s ago; pass a time in the future (check this host's clock)`, 2);
  }
  if (at > nowMs + MAX_AHEAD_MS) throw new UserError(`--start-at ${text}: more than 24 h ahead; pass a time within a day`, 2);
  return at;
}

/** Sleeps until `atMs` on the wall clock; false when the signal (Ctrl+C) came first. */
export function waitUntil(atMs: number, signal: AbortSignal, nowMs: () => number = Date.now): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve(true);
    }, Math.max(0, atMs - nowMs()));
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
