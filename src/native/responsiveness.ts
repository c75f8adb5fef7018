/**
 * `anyperf client HOST --responsiveness`: latency under working conditions. A probe (a TCP 1-byte request/response on
 * its own connection, its own native test) runs alone, then beside bulk load up, down and both ways (each load its
 * own native test with -P streams). Each phase is two tests the server runs at once; the probe starts once the load
 * sends, and both measure after the same warm-up, so the probe's window lies inside the load's.
 */
import { Plan } from "../plan.ts";
import type { Results } from "../report/result.ts";
import type { TestRun } from "../engine/test-run.ts";
import { WorkerPool, cores } from "../engine/worker-pool.ts";
import { runNativeClient, type ClientTarget } from "./client.ts";
import { routeToServer } from "./diagnose-run.ts";
import { BacklogWatch } from "../host/backlog-watch.ts";
import { markPart } from "../engine/run-parts.ts";
import { PING_BYTES } from "../worker/udp-pings.ts";
import type { Direction } from "./request.ts";
import { LOADED_PHASES, phaseFigures, responsiveness, type LoadedPhase, type PhaseName, type Responsiveness, type ResponsivenessPhase } from "./responsiveness-report.ts";

/** Default warm-up of a loaded phase: loss-based TCP needs a few of its (growing) round trips to fill a deep queue. */
export const LOAD_WARMUP_S = 2;
/** Load streams per direction without -P: more than one, so one flow's slow start does not leave the path idle. */
export const RESPONSIVENESS_STREAMS = 4;
/** The load outlasts the probe by this much: the probe's set-up (a control connection) starts after the load's. */
const LOAD_OVERHANG_S = 0.5;

const DIRECTION: Record<LoadedPhase, Direction> = { upload: "forward", download: "reverse", bidir: "bidir" };

/**
 * The probe's transactions start at most this often: its samples spread evenly over the phase. Back to back, it would
 * take thousands while a queue drains empty and a handful while it is full, and its median would miss the queue.
 */
export const PROBE_GAP_MS = 5;

/**
 * The probe's interval: the live page draws its latency over time from the probe's intervals (each its own p50, p90,
 * p99), and at one every 5 ms a quarter second holds some 50 round trips.
 */
export const PROBE_INTERVAL_S = 0.25;

/** The probe's plan for a phase: one paced 1-byte request/response stream over the phase's measured seconds. */
export function probePlan(load: Plan, warmupS: number): Plan {
  return Plan.parse({ ...load, test: "rr", streams: 1, requestBytes: 1, responseBytes: 1, transactionGapMs: PROBE_GAP_MS, bufferBytes: undefined, bitsPerSecond: 0, packetsPerSecond: 0, warmupS, cooldownS: 0, intervalS: PROBE_INTERVAL_S });
}

/** The UDP pings' pace: one every 2 ms, several per 10 ms, each answered or not without holding the next. */
export const PING_GAP_MS = 2;

/** The probe's UDP half for a phase: timestamped pings (udp-pings.ts) on their own socket beside the TCP probe. */
export function pingPlan(load: Plan, warmupS: number): Plan {
  return Plan.parse({ ...probePlan(load, warmupS), transport: "udp", requestBytes: PING_BYTES, responseBytes: PING_BYTES, transactionGapMs: PING_GAP_MS });
}

let measurements = 0;

export interface ResponsivenessHooks {
  signal: AbortSignal;
  onRun?: (run: TestRun) => void;
  /** Called as each phase ends (progress lines). */
  onPhase?: (name: PhaseName, figures: ResponsivenessPhase) => void;
}

/** Starts `probeRun` once the load's data flows; resolves with both results, or none when the load ended first. */
async function beside<T>(loadRun: (onRun: (r: TestRun) => void) => Promise<Results>, probeRun: () => Promise<T>): Promise<[Results, T] | undefined> {
  const started: { probe?: Promise<T> } = {};
  const loaded = await loadRun((run) => {
    const off = run.onPhase((p) => {
      if (p !== "warm-up" && p !== "measuring") return;
      off();
      started.probe = probeRun();
      // Awaited once the load ends; until then a failure must not count as unhandled.
      started.probe.catch(() => {});
    });
  });
  if (!started.probe) return undefined;
  return [loaded, await started.probe];
}

export async function runResponsiveness(plan: Plan, target: ClientTarget, hooks: ResponsivenessHooks): Promise<Responsiveness> {
  // One Worker per core, before any phase sizes the shared pool to its own streams.
  WorkerPool.shared({ workers: Math.max(2, cores()) });
  const warmupS = plan.warmupS > 0 ? plan.warmupS : LOAD_WARMUP_S;
  const phases: Partial<Record<PhaseName, ResponsivenessPhase>> = {};
  const measurement = String(++measurements);
  const run = (p: Plan, direction: Direction, phase: PhaseName, onRun?: (r: TestRun) => void) =>
    runNativeClient(p, { ...target, direction }, {
      signal: hooks.signal,
      onRun: (r) => {
        markPart(r, { kind: "responsiveness", measurement, phase, role: p.test === "stream" ? "load" : "probe" });
        hooks.onRun?.(r);
        onRun?.(r);
      },
    });
  const iface = (await routeToServer(target.host)).interface;
  // The probe: its TCP request/response and its UDP pings, side by side.
  const probes = (warmup: number, phase: PhaseName, onRun?: (r: TestRun) => void) =>
    Promise.all([run(probePlan(plan, warmup), "forward", phase, onRun), run(pingPlan(plan, warmup), "forward", phase)]);
  const [idleProbe, idlePings] = await probes(0, "idle");
  if (idleProbe.interrupted && !idleProbe.summary.latency_us) return responsiveness(phases);
  phases.idle = phaseFigures(idleProbe, undefined, undefined, undefined, idlePings);
  hooks.onPhase?.("idle", phases.idle);
  for (const name of LOADED_PHASES) {
    if (hooks.signal.aborted) break;
    const load = Plan.parse({ ...plan, warmupS, cooldownS: LOAD_OVERHANG_S });
    const watch = new BacklogWatch(iface);
    const measuring = (r: TestRun) => r.onPhase((p) => p === "measuring" && watch.start());
    const both = await beside((onRun) => run(load, DIRECTION[name], name, onRun), () => probes(warmupS, name, measuring)).finally(() => watch.stop());
    // Ctrl+C before the load sent (no probe), or during the phase: the phases before it are the report.
    if (!both || both[0].interrupted || both[1][0].interrupted) break;
    const [loaded, [probe, pings]] = both;
    phases[name] = phaseFigures(probe, loaded, phases.idle, watch.stop(), pings);
    hooks.onPhase?.(name, phases[name]!);
  }
  return responsiveness(phases);
}
