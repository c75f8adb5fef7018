import { Results } from "../report/result.ts";
import { textReport } from "../report/text.ts";
import { jsonDocument } from "../report/json-numbers.ts";
import { liveIntervalsCsv } from "../report/csv.ts";
import { attachIntervalLines } from "../report/progress.ts";
import { checkOutputPath } from "../report/atomic-file.ts";
import type { TestRun } from "../engine/test-run.ts";
import { interruptedExitCode, shutdownSignal } from "../signals.ts";
import { checkPushUrl, pushResults, type PushTargets } from "../fleet/push.ts";

/**
 * One measured run as every native command does it: the --csv path checked before the test, interval lines (not with
 * --json) and the CSV written per interval during the run; the results, checked against their schema.
 */
export async function measureRun(
  run: (hooks: { signal: AbortSignal; onRun: (r: TestRun) => void }) => Promise<Results>,
  out: { json: boolean; csv?: string; intervalLines?: boolean } & PushTargets,
  onRun?: (r: TestRun) => void,
): Promise<Results> {
  if (out.csv !== undefined) checkOutputPath("--csv", out.csv);
  if (out.push !== undefined) checkPushUrl("--push", out.push);
  if (out.pushgateway !== undefined) checkPushUrl("--pushgateway", out.pushgateway);
  let detach = () => {};
  let csv: { close(): void } | undefined;
  let results;
  try {
    results = await run({
      signal: shutdownSignal(),
      onRun: (r) => {
        if (!out.json && out.intervalLines !== false) detach = attachIntervalLines(r);
        if (out.csv !== undefined) csv = liveIntervalsCsv(out.csv, r);
        onRun?.(r);
      },
    });
  } finally {
    detach();
    csv?.close();
  }
  return Results.parse(results);
}

/**
 * The report of one run (text or --json), then --push/--pushgateway, and the exit code (128 + signal after Ctrl+C,
 * 1 when a stream failed or the results were not delivered).
 */
export async function printRun(results: Results, out: { json: boolean } & PushTargets): Promise<number> {
  console.log(out.json ? jsonDocument(results) : textReport(results));
  const undelivered = await pushResults(out, results);
  for (const line of undelivered) console.error(`anyperf: ${line}`);
  return interruptedExitCode(shutdownSignal()) ?? (results.errors.length > 0 || undelivered.length > 0 ? 1 : 0);
}
