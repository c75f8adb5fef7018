import type { ChartPoint } from "../report/svg-charts.ts";
import type { BytesByDirection, IntervalEvent, MeasurementView, Role, StreamView, TestView } from "./schema.ts";

/** One stream's throughput over the test's recent intervals: x = seconds since the test started, y = bits/s. */
export interface StreamSeries {
  id: number;
  side: StreamView["side"];
  points: ChartPoint[];
}

/**
 * What the status app reads. The engine's registry of live tests implements it; memory-source.ts is a plain
 * implementation for tests and for front ends that push views themselves. Every call is synchronous and cheap:
 * /status may be polled ten times a second next to a running test.
 */
export interface StatusSource {
  /** What this process was started as (shown even before any test exists). */
  readonly mode: string;
  readonly role: Role;
  /** True when the process keeps listening for further tests (a server), so "done" is followed by "waiting". */
  readonly persistent: boolean;
  /** --label: who this process is in a fleet; absent = none. */
  readonly labels?: Readonly<Record<string, string>>;
  /** Recent tests, newest first, the running one included; the source bounds how many it keeps. */
  tests(): TestView[];
  /** Payload bytes of every test this process ran, those no longer kept included. */
  bytesTotal(): number;
  /** The same, every stream of every test, by direction (see StatusDocument.bytesByDirection). */
  bytesByDirection(): BytesByDirection;
  /** The test that is running now (any phase but "done"), if any. */
  current(): TestView | undefined;
  /** The final results document of test `id` (default: the most recent finished test), once that test is done. */
  results(id?: string): unknown | undefined;
  /**
   * The measuring streams of test `id` over time, for the live chart (the first few; `total` says how many the test
   * has). Absent where the source keeps none: the chart then draws the sum only.
   */
  streamSeries?(id: string): { shown: readonly StreamSeries[]; total: number };
  /** The newest measurement made of several tests (--responsiveness), while its tests are kept; absent where none. */
  measurement?(): MeasurementView | undefined;
  /** Calls `listener` once per interval of any test; returns the unsubscribe function. */
  subscribe(listener: (e: IntervalEvent) => void): () => void;
}
