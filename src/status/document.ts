import type { Phase, StatusDocument, TestSummary, TestView } from "./schema.ts";
import type { StatusSource } from "./source.ts";

/** The process's phase: the running test's, else "done" after a one-shot test, else "waiting". */
export function processPhase(source: StatusSource, running: TestView | undefined, latest: TestView | undefined): Phase {
  if (running) return running.phase;
  if (latest && !source.persistent) return "done";
  return "waiting";
}

export function summarize(view: TestView, hasResults: boolean): TestSummary {
  return {
    id: view.id,
    mode: view.mode,
    role: view.role,
    peer: view.peer,
    phase: view.phase,
    startedAt: view.startedAt,
    elapsedSeconds: view.elapsedSeconds,
    averageBitsPerSecond: view.throughput.average,
    results: hasResults ? `/results/${view.id}` : null,
  };
}

/** The test the page shows: the running one (the newest, when several run), else the most recent one. */
export function shownTest(tests: readonly TestView[]): TestView | undefined {
  return tests.find((t) => t.phase !== "done") ?? tests[0];
}

/** GET /status, built from one read of the source. */
export function buildStatusDocument(source: StatusSource, now: Date): StatusDocument {
  // One read of the tests, so the document agrees with itself (a second read would be a few ms later).
  const tests = source.tests();
  const running = tests.filter((t) => t.phase !== "done");
  const latest = shownTest(tests);
  const measurement = source.measurement?.();
  return {
    mode: source.mode,
    role: source.role,
    labels: { ...source.labels },
    phase: processPhase(source, running[0], latest),
    now: now.toISOString(),
    test: latest ?? null,
    running,
    bytesTotal: source.bytesTotal(),
    bytesByDirection: source.bytesByDirection(),
    recent: tests.map((t) => summarize(t, t.phase === "done" && source.results(t.id) !== undefined)),
    ...(measurement ? { measurement } : {}),
  };
}
