import type { HistoryEntry } from "./history.ts";

/**
 * A run's kind of test, the unit its figures compare within: bulk TCP and UDP rank by throughput, RR and CRR by
 * transactions/s and latency, and a connect per transaction (CRR) is another figure from a held connection (RR).
 * A line without a transport (older history versions) reads as TCP. A responsiveness run (a probe beside TCP load
 * each way) is its own kind.
 */
export function testKind(e: Pick<HistoryEntry, "transport" | "test">): string {
  if (e.test === "responsiveness") return "responsiveness";
  const transport = (e.transport ?? "tcp").toUpperCase();
  return e.test === "stream" ? `${transport} bulk` : `${transport} ${e.test.toUpperCase()}`;
}
