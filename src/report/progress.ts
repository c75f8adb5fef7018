import type { Interval } from "./result.ts";
import type { TestRun } from "../engine/test-run.ts";
import { formatBits } from "../units.ts";

/** One live line on a terminal (stderr), nothing when piped: elapsed/remaining and the current rate. */
export function attachProgress(run: TestRun, stream: NodeJS.WriteStream = process.stderr): () => void {
  if (!stream.isTTY) return () => {};
  const total = run.timing.warmupS + run.timing.durationS + run.timing.cooldownS;
  const started = performance.now();
  const off = run.onInterval((i: Interval) => {
    const elapsed = (performance.now() - started) / 1000;
    const rate = i.sum.transactions_per_second !== undefined ? `${Math.round(i.sum.transactions_per_second)} trans/s` : formatBits(i.sum.throughput_bps);
    const pps = i.sum.packets_per_second !== undefined ? `, ${Math.round(i.sum.packets_per_second)} pkt/s` : "";
    stream.write(`\r\x1b[K[${elapsed.toFixed(1)}/${total.toFixed(1)} s, ${Math.max(0, total - elapsed).toFixed(0)} s left] ${i.phase}: ${rate}${pps}`);
  });
  return () => {
    off();
    stream.write("\r\x1b[K");
  };
}
