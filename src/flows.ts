import type { Results, StreamFigures } from "./report/result.ts";
import { memoryPerFlowBytes, slowestToFastestRatio } from "./formulas.ts";

export type Flows = NonNullable<Results["flows"]>;

/**
 * One process's many-flows figures: its RSS growth per flow, and how evenly the flows were served. A flow's rate is
 * counted where the flow is measured: an RR client's transactions/s, a bulk receiver's bits/s (`anyperf client`
 * passes the server's receivers too when only it receives).
 */
export class FlowWatch {
  private readonly before = process.memoryUsage().rss;
  private with = this.before;

  constructor(private readonly count: number) {}

  /** The flows are all open and have run: the measured window's end. */
  measured(): void {
    this.with = process.memoryUsage().rss;
  }

  figures(streams: readonly StreamFigures[]): Flows {
    const rates = streams.filter((s) => s.side === "client" || s.side === "recv").map((s) => s.transactions_per_second ?? s.throughput_bps);
    return {
      count: this.count,
      rss_before_bytes: this.before,
      rss_with_flows_bytes: this.with,
      memory_per_flow_bytes: memoryPerFlowBytes(this.before, this.with, this.count),
      slowest_to_fastest: slowestToFastestRatio(rates),
    };
  }
}
