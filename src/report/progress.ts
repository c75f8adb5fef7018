import type { Interval } from "./result.ts";
import type { TestRun } from "../engine/test-run.ts";
import { figuresLine } from "./text.ts";

/**
 * Interval lines as iperf3 prints them (-i): a header, then per interval one line per receiving stream (when there
 * are 2 to 8 of them) and a [SUM] line, on a terminal and into a pipe alike, so a log or `| tee` keeps the run's
 * course. Seconds count from the start of the test; warm-up and cool-down intervals are labelled.
 */
export const INTERVAL_HEADER = `[ ID] Interval          ${"bytes".padStart(11)}  ${"throughput".padStart(14)}`;

/** Streams listed one by one up to this many; beyond it only [SUM], as a wall of lines helps nobody. */
const STREAM_LINES_MAX = 8;

export function intervalLines(i: Interval): string[] {
  const span = `${Math.max(0, i.start).toFixed(2).padStart(6)}-${i.end.toFixed(2).padEnd(6)} sec`;
  const phase = i.phase === "measuring" ? "" : `  (${i.phase})`;
  const receivers = i.streams.filter((s) => s.side === "recv" || s.side === "client");
  const out = receivers.length > 1 && receivers.length <= STREAM_LINES_MAX ? receivers.map((s) => `[${String(s.id).padStart(3)}] ${span}  ${figuresLine(s)}${phase}`) : [];
  out.push(`[SUM] ${span}  ${figuresLine(i.sum)}${phase}`);
  return out;
}

/** Prints each interval of `run` as it is cut; returns the detach function. */
export function attachIntervalLines(run: TestRun, write: (text: string) => void = (t) => void process.stdout.write(t)): () => void {
  let first = true;
  return run.onInterval((i: Interval) => {
    write(`${first ? `${INTERVAL_HEADER}\n` : ""}${intervalLines(i).join("\n")}\n`);
    first = false;
  });
}
