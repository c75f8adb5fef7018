import { createHostSampler, type HostSampler } from "../host/sampler.ts";
import type { HostSample } from "../host/sample.ts";
import { hostWindow, type HostWindow } from "../host/window.ts";
import type { Cut, Window } from "./cut.ts";
import type { TestRun } from "./test-run.ts";

interface Edge {
  atMs: number;
  cuts: Map<TestRun, Cut>;
  host: HostSample | undefined;
}

/**
 * The window in which several Tests ran at once, each with its own front end and clock (`netperf --instances`, a
 * run over servers of different kinds): it opens when the last expected Test joins (every Test cut at that instant)
 * and closes when the first one leaves (every Test cut again), so what each Test moved in it is what it moved while
 * all of them were running. Summing each Test's own rate instead counts a Test that ran alone at its alone rate;
 * with starts spread over seconds that sum is above anything they reached together.
 */
export class CommonWindow {
  private readonly joined = new Set<TestRun>();
  private start: Edge | undefined;
  private end: Edge | undefined;
  private closed = false;
  private readonly sampler: HostSampler | undefined;
  private readonly edgeListeners = new Set<(edge: "open" | "close", atMs: number) => void>();

  private readonly latency: boolean;

  /**
   * `host`: this host's /proc over the window too (CPU per core, NICs), as a measured window has it. `latency`: the
   * cuts copy the latency histograms (8 KiB a stream), for percentiles over the window.
   */
  constructor(
    private expected: number,
    o: { host?: boolean; latency?: boolean } = {},
  ) {
    this.sampler = o.host ? createHostSampler() : undefined;
    this.latency = o.latency ?? false;
  }

  /** A Test's data began: the last expected one opens the window. */
  join(run: TestRun): void {
    if (this.closed || this.start) return;
    this.joined.add(run);
    this.openWhenAll();
  }

  /** One expected Test will never join (its setup failed): the window waits for the others only. */
  drop(): void {
    if (this.closed || this.start) return;
    this.expected--;
    this.openWhenAll();
  }

  /** A Test's data ended (or it failed): the first one closes the window. */
  leave(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.start) this.end = this.edge();
    this.sampler?.close();
    if (this.end) for (const l of this.edgeListeners) l("close", this.end.atMs);
  }

  /** Joins `run` when its measured phase begins and leaves when it ends, as its front end moves its phases. */
  follow(run: TestRun): void {
    if (run.phase === "measuring") this.join(run);
    else if (run.phase === "cool-down" || run.phase === "done") this.leave();
    run.onPhase((p) => {
      if (p === "measuring") this.join(run);
      if (p === "cool-down" || p === "done") this.leave();
    });
  }

  /** Told at the window's edges, at the instants its cuts stand for (a native server cuts its own window on them). */
  onEdge(l: (edge: "open" | "close", atMs: number) => void): void {
    this.edgeListeners.add(l);
  }

  /** What `run` moved over the window; undefined when the window never opened or `run` was not in it. */
  window(run: TestRun): Window | undefined {
    const from = this.start?.cuts.get(run);
    const to = this.end?.cuts.get(run);
    return from && to ? run.between(from, to) : undefined;
  }

  /** `run`'s figures over the window, as its results() gives them over its own. */
  figures(run: TestRun): ReturnType<TestRun["over"]> | undefined {
    const from = this.start?.cuts.get(run);
    const to = this.end?.cuts.get(run);
    return from && to ? run.over(from, to) : undefined;
  }

  /** The window's length; undefined until it closed after opening. */
  get seconds(): number | undefined {
    return this.start && this.end ? (this.end.atMs - this.start.atMs) / 1000 : undefined;
  }

  /** This host over the window (with `host`). */
  host(): HostWindow | undefined {
    return this.start?.host && this.end?.host ? hostWindow(this.start.host, this.end.host) : undefined;
  }

  private openWhenAll(): void {
    if (this.joined.size < this.expected || this.expected <= 0) return;
    this.start = this.edge();
    for (const l of this.edgeListeners) l("open", this.start.atMs);
  }

  private edge(): Edge {
    const atMs = performance.now();
    return { atMs, cuts: new Map([...this.joined].map((r) => [r, r.cut(this.latency, atMs)])), host: this.sampler?.sample() };
  }
}
