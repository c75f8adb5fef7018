import type { Snapshot } from "../counters.ts";
import type { StreamSpec } from "../stream-spec.ts";
import type { StreamEnd } from "./data-plane.ts";
import type { TcpSample } from "./tcp-path.ts";

/**
 * What a TestRun cuts: streams whose cumulative counters sit in the counter table's layout (src/counters.ts). A
 * DataPlane's are written by Workers; a PolledPlane's are read on the main thread at each cut, for traffic that cannot
 * leave it (iperf 2's UDP port, whose one socket carries every client's flows).
 */
export interface MeasuredPlane {
  readonly specs: readonly StreamSpec[];
  readonly ends: readonly (StreamEnd | undefined)[];
  readonly ended: Promise<void>;
  copyCounters(): Float64Array;
  snapshot(withHistograms?: boolean, counters?: Float64Array): Snapshot;
  onStreamEnd(l: (stream: number, end: StreamEnd) => void): () => void;
  /** A sending TCP stream's TCP_INFO reads, oldest first (a DataPlane's Workers post one a second). */
  tcpSamples?(stream: number): readonly TcpSample[];
}
