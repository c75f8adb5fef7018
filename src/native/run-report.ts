import { Results } from "../report/result.ts";
import { textReport } from "../report/text.ts";
import { liveIntervalsCsv } from "../report/csv.ts";
import { attachIntervalLines } from "../report/progress.ts";
import { checkOutputPath } from "../report/atomic-file.ts";
import type { TestRun } from "../engine/test-run.ts";
import { interruptedExitCode, shutdownSignal } from "../signals.ts";

/**
 * The tail every native command shares: the --csv path checked before the test, interval lines (not with --json) and the
 * CSV written per interval during the run, then the report (text or --json) and the exit code (128 + signal after
 * Ctrl+C, 1 when a stream failed).
 */
export async function runAndReport(
  run: (hooks: { signal: AbortSignal; onRun: (r: TestRun) => void }) => Promise<Results>,
  out: { json: boolean; csv?: string },
  onRun?: (r: TestRun) => void,
): Promise<number> {
  if (out.csv !== undefined) checkOutputPath("--csv", out.csv);
  let detach = () => {};
  let csv: { close(): void } | undefined;
  const signal = shutdownSignal();
  let results;
  try {
    results = await run({
      signal,
      onRun: (r) => {
        if (!out.json) detach = attachIntervalLines(r);
        if (out.csv !== undefined) csv = liveIntervalsCsv(out.csv, r);
        onRun?.(r);
      },
    });
  } finally {
    detach();
    csv?.close();
  }
  Results.parse(results);
  console.log(out.json ? JSON.stringify(results, null, 2) : textReport(results));
  return interruptedExitCode(signal) ?? (results.errors.length > 0 ? 1 : 0);
}
