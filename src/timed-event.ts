import { Slot } from "./counters.ts";
import { record } from "./histogram.ts";

/**
 * One timed event (a transaction, a timed call, a burst, a datagram's transit) of `us` microseconds into a stream's
 * counters at `o` and its histogram: count, sum, sum of squares, running min and max, bucket. The Workers' streams
 * (StreamContext) and the main thread's polled ones (PolledPlane) time through this one function; rr-loops.c does
 * the same in C.
 */
export function timeEvent(c: Float64Array, o: number, hist: Uint32Array, us: number): void {
  c[o + Slot.timed]!++;
  c[o + Slot.latencySumUs]! += us;
  c[o + Slot.latencySqSumUs]! += us * us;
  if (us < c[o + Slot.latencyMinUs]! || c[o + Slot.latencyMinUs] === 0) c[o + Slot.latencyMinUs] = us;
  if (us > c[o + Slot.latencyMaxUs]!) c[o + Slot.latencyMaxUs] = us;
  record(hist, us);
}
