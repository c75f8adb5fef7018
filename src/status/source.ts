import type { IntervalEvent, Role, TestView } from "./schema.ts";

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
  /** The test that is running now (any phase but "done"), if any. */
  current(): TestView | undefined;
  /** The final results document of test `id` (default: the most recent finished test), once that test is done. */
  results(id?: string): unknown | undefined;
  /** Calls `listener` once per interval of any test; returns the unsubscribe function. */
  subscribe(listener: (e: IntervalEvent) => void): () => void;
}
