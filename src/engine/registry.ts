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
