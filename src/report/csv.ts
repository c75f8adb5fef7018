import { stringify } from "csv-stringify/sync";
import type { Interval } from "./result.ts";

const COLUMNS = ["start_s", "end_s", "phase", "stream", "side", "bytes", "throughput_bps", "packets", "lost", "transactions", "transactions_per_second", "p50_us", "p99_us"];

/** Interval rows, one per stream plus a SUM row per interval. */
export function intervalsCsv(intervals: Interval[]): string {
  const rows: (string | number)[][] = [];
  const cell = (v: number | undefined) => (v === undefined ? "" : v);
  for (const i of intervals) {
    for (const s of [...i.streams.map((s) => ({ ...s, key: String(s.id) })), { ...i.sum, key: "SUM", side: "" }]) {
      rows.push([i.start.toFixed(3), i.end.toFixed(3), i.phase, s.key, s.side, s.bytes, Math.round(s.throughput_bps), cell(s.packets), cell(s.lost), cell(s.transactions), cell(s.transactions_per_second), cell(s.latency_us?.p50), cell(s.latency_us?.p99)]);
    }
  }
  return stringify(rows, { header: true, columns: COLUMNS });
}
