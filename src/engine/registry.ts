import type { TestRun } from "./test-run.ts";

/**
 * Every TestRun announces itself here, so process-wide observers (the status endpoint) see the tests of any mode
 * without the front ends knowing about them.
 */
const listeners = new Set<(run: TestRun) => void>();

export function onRunStarted(l: (run: TestRun) => void): () => void {
  listeners.add(l);
  return () => listeners.delete(l);
}

export function announceRun(run: TestRun): void {
  for (const l of listeners) l(run);
}

const resultListeners = new Set<(run: TestRun, results: unknown) => void>();
const pending = new WeakSet<object>();

export function onRunResults(l: (run: TestRun, results: unknown) => void): () => void {
  resultListeners.add(l);
  return () => resultListeners.delete(l);
}

/**
 * A front end that completes a run's results after finishing it (the native client adds the server's half and the
 * diagnosis) says so first: observers then wait for settleResults rather than show the engine's own half.
 */
export function resultsToFollow(run: TestRun): void {
  pending.add(run);
}

export function resultsPending(run: object): boolean {
  return pending.has(run);
}

/** The run's final results (none when the front end failed to make them): observers stop waiting. */
export function settleResults(run: TestRun, results?: unknown): void {
  pending.delete(run);
  if (results !== undefined) for (const l of resultListeners) l(run, results);
}
