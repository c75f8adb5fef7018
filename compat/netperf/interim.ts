import { isRequestResponse, type MigratedTest } from "../../interop/netperf/test-request.ts";
import { calcThruput, formatUnits } from "./figures.ts";
import type { OutputMode } from "./plan.ts";
import { sprintf } from "./printf.ts";

/**
 * netperf's demo mode (global -D): while the test runs, the rate over each interval, printed in the style of the
 * test's output (console text, CSV with -o, NETPERF_INTERIM_RESULT[n] keys with -k, which flent reads), then one
 * last line for the time since the previous one when the data loop ends.
 */

export interface Interim {
  /** Position among the run's interim lines (keyval numbers them across -i rounds). */
  index: number;
  /** Units counted in the interval (see interimUnits) over its length. */
  units: number;
  intervalS: number;
  /** Wall clock at the end of the interval, ms since the epoch. */
  endingMs: number;
}

/** What netperf's demo ticks add up in each test: transactions (RR with -f x) or request+response bytes per
 * transaction, bytes sent by a send-only test, bytes received by TCP_MAERTS. */
export function interimUnits(test: MigratedTest, libfmt: string, c: { bytes: number; transactions: number }, requestSize: number, responseSize: number): number {
  if (isRequestResponse(test)) return libfmt === "x" ? c.transactions : c.transactions * (requestSize + responseSize);
  return c.bytes;
}

export function interimText(mode: OutputMode, libfmt: string, i: Interim): string {
  const rate = calcThruput(i.units, i.intervalS, libfmt);
  const units = `${formatUnits(libfmt)}/s`;
  // netperf prints tv_sec and tv_usec / 1000 as "%ld.%.3ld".
  const ending = `${Math.floor(i.endingMs / 1000)}.${String(Math.floor(i.endingMs % 1000)).padStart(3, "0")}`;
  switch (mode) {
    case "legacy":
    case "human":
      return sprintf("Interim result: %7.2f %s over %.3f seconds ending at %s\n", rate, units, i.intervalS, ending);
    case "csv":
      return sprintf("%7.2f,%s,%.3f,%s\n", rate, units, i.intervalS, ending);
    case "keyval":
      return sprintf("NETPERF_INTERIM_RESULT[%d]=%.2f\nNETPERF_UNITS[%d]=%s\nNETPERF_INTERVAL[%d]=%.3f\nNETPERF_ENDING[%d]=%s\n", i.index, rate, i.index, units, i.index, i.intervalS, i.index, ending);
  }
}

/**
 * The interval bookkeeping: given the cumulative unit count at each tick, what to print. netperf only looks at the
 * clock when a send, receive or transaction completes, so an interval in which nothing completed prints nothing
 * and runs on into the next one; the final line covers whatever arrived after the last one (demo_interval_final).
 */
export class InterimClock {
  private lastUnits = 0;
  private count = 0;

  constructor(private lastAtMs: number) {}

  /** A new data phase (the next -i round) starts counting from zero. */
  restart(nowMs: number): void {
    this.lastUnits = 0;
    this.lastAtMs = nowMs;
  }

  tick(units: number, nowMs: number, wallMs: number): Interim | undefined {
    if (units <= this.lastUnits) return undefined;
    const out = { index: this.count++, units: units - this.lastUnits, intervalS: (nowMs - this.lastAtMs) / 1000, endingMs: wallMs };
    this.lastUnits = units;
    this.lastAtMs = nowMs;
    return out;
  }
}
