import { stringify } from "csv-stringify/sync";
import type { Interval } from "./result.ts";
import type { TestRun } from "../engine/test-run.ts";
import { AppendLog } from "./atomic-file.ts";

const COLUMNS = ["start_s", "end_s", "phase", "stream", "side", "bytes", "throughput_bps", "packets", "lost", "transactions", "transactions_per_second", "p50_us", "p99_us"];

/** An interval's rows: one per stream plus a SUM row. */
function rows(i: Interval): (string | number)[][] {
  const cell = (v: number | undefined) => (v === undefined ? "" : v);
  return [...i.streams.map((s) => ({ ...s, key: String(s.id) })), { ...i.sum, key: "SUM", side: "" }].map((s) => [
    i.start.toFixed(3), i.end.toFixed(3), i.phase, s.key, s.side, s.bytes, Math.round(s.throughput_bps), cell(s.packets), cell(s.lost), cell(s.transactions), cell(s.transactions_per_second), cell(s.latency_us?.p50), cell(s.latency_us?.p99),
  ]);
}

/**
 * --csv FILE written as the run goes: the header at once, then each measured interval's rows as one block when the
 * interval completes (an AppendLog block: a reader or a SIGKILL sees whole intervals, never half a row), so a run
 * killed mid-way leaves the rows it measured.
 * At the end the file holds one block per entry of results.intervals.
 */
export function liveIntervalsCsv(path: string, run: TestRun): { close(): void } {
  const log = new AppendLog(path, { flag: "--csv", fresh: true });
  log.append(stringify([], { header: true, columns: COLUMNS }));
  log.flush();
  const off = run.onInterval((i: Interval) => {
    if (i.phase === "measuring") log.append(stringify(rows(i)));
  });
  return {
    close() {
      off();
      log.flush();
    },
  };
}
