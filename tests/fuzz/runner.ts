/**
 * Registers one bun test per fuzz target and runs each in its own Worker (worker.ts) under a watchdog: a call into a
 * decoder that has not returned after FUZZ_HANG_MS is a hang, the Worker is terminated and the test fails with the
 * seed and execution number to replay it. Failures print fast-check's report (seed, path, shrunk counterexample).
 */
import { test } from "bun:test";
import { FUZZ_RUNS, WATCH_SLOTS, seedFor, type FuzzTarget, type RunReport } from "./harness.ts";
import type { WorkerReply, WorkerRequest } from "./worker.ts";

const HANG_MS = Number(process.env.FUZZ_HANG_MS || 10_000);
/** Whole-target limit; long runs (scripts/fuzz --long) take minutes per target. */
const TARGET_LIMIT_MS = Number(process.env.FUZZ_TARGET_MS || Math.max(120_000, FUZZ_RUNS * 20));

type Outcome = { kind: "done"; report: RunReport; ms: number } | { kind: "error"; message: string };

function runInWorker(module: string, target: string): Promise<Outcome> {
  const watchBuffer = new SharedArrayBuffer(WATCH_SLOTS * 8);
  const watch = new Float64Array(watchBuffer);
  const worker = new Worker(new URL("./worker.ts", import.meta.url).href);
  const t0 = performance.now();
  const seed = seedFor(target);
  const path = process.env.FUZZ_PATH || undefined;
  return new Promise<Outcome>((resolve) => {
    let settled = false;
    const settle = (o: Outcome) => {
      if (settled) return;
      settled = true;
      clearInterval(poll);
      worker.terminate();
      resolve(o);
    };
    const replay = () =>
      `replay: FUZZ_SEED=${seed} FUZZ_RUNS=${FUZZ_RUNS} node_modules/.bin/bun test tests/fuzz -t '${target}'` +
      ` (property execution #${watch[1]}; within the first ${FUZZ_RUNS} it is FUZZ_PATH=${Math.max(0, watch[1]! - 1)})`;
    const poll = setInterval(() => {
      // One read: the worker clears the slot concurrently.
      const callStart = watch[0]!;
      const since = callStart > 0 ? Date.now() - callStart : 0;
      if (since > HANG_MS) settle({ kind: "error", message: `hang: a call did not return within ${HANG_MS} ms; ${replay()}` });
      else if (performance.now() - t0 > TARGET_LIMIT_MS) {
        settle({ kind: "error", message: `target ran longer than ${TARGET_LIMIT_MS} ms; ${replay()}` });
      }
    }, 50);
    worker.onmessage = (e: MessageEvent<WorkerReply>) => {
      const r = e.data;
      settle(r.ok ? { kind: "done", report: r.report, ms: performance.now() - t0 } : { kind: "error", message: r.error });
    };
    worker.onerror = (e: ErrorEvent) => settle({ kind: "error", message: `worker error: ${e.message}` });
    const req: WorkerRequest = { module, target, runs: FUZZ_RUNS, seed, watch: watchBuffer, ...(path ? { path } : {}) };
    worker.postMessage(req);
  });
}

/** One test per target of `module` (a *.targets.ts URL); `targets` is that module's export, for the names. */
export function fuzzSuite(module: URL, targets: Record<string, FuzzTarget>): void {
  for (const name of Object.keys(targets)) {
    test(
      name,
      async () => {
        const o = await runInWorker(module.href, name);
        if (o.kind === "error") throw new Error(o.message);
        const r = o.report;
        if (r.failed) throw new Error(`${r.message}\n(seed ${r.seed}, path ${r.path ?? "-"})`);
        if (process.env.FUZZ_VERBOSE) {
          console.log(`fuzz ${name}: ${r.numRuns} cases in ${(o.ms / 1000).toFixed(1)} s (seed ${r.seed})`);
        }
        // A property that stopped early (interrupted) tested less than it claims.
        if (r.interrupted || (!process.env.FUZZ_PATH && r.numRuns < FUZZ_RUNS)) throw new Error(`only ${r.numRuns} of ${FUZZ_RUNS} cases ran`);
      },
      TARGET_LIMIT_MS + 10_000,
    );
  }
}
