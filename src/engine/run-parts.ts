/**
 * A run that is one part of a measurement made of several (`--responsiveness`: each phase's probe and load are
 * tests of their own). The front end that runs them says which is which, so observers (the status endpoint) can
 * show the measurement as one: its probe's latency over time beside its load's throughput, across the phases.
 */
export interface RunPart {
  /** The measurement's kind, e.g. "responsiveness". */
  kind: string;
  /** Tells one measurement from the next (a --repeat's runs). */
  measurement: string;
  /** The measurement's phase this run belongs to ("idle", "upload", ...). */
  phase: string;
  /** What the run does in it. */
  role: "probe" | "load";
}

const parts = new WeakMap<object, RunPart>();

export function markPart(run: object, part: RunPart): void {
  parts.set(run, part);
}

export function partOf(run: object): RunPart | undefined {
  return parts.get(run);
}
