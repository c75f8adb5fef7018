/**
 * A repeating timer whose ticks stay on the grid start + k x period: a late tick (a busy event loop) makes the
 * next one come sooner instead of shifting every later report, as iperf3's timers do.
 */
export class GridTimer {
  private k = 0;
  private t: ReturnType<typeof setTimeout> | undefined;
  private stopped = false;

  constructor(private readonly periodMs: number, private readonly fn: () => void, private readonly start = performance.now()) {
    this.arm();
  }

  private arm(): void {
    this.k++;
    const due = this.start + this.k * this.periodMs;
    this.t = setTimeout(() => {
      if (this.stopped) return;
      this.fn();
      if (!this.stopped) this.arm();
    }, Math.max(0, due - performance.now()));
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.t);
  }
}

/** Calls fn every periodMs counted from startMs (default now). */
export function everyInterval(periodMs: number, fn: () => void, startMs?: number): GridTimer {
  return new GridTimer(periodMs, fn, startMs);
}

/**
 * A one-shot timer that fires at `dueMs` (performance.now() clock) within about a millisecond: it sleeps until a
 * few ms before, then waits out the rest actively. The omit and end boundaries decide which bytes count, and the
 * peer's boundaries are exact; a timer a few ms late would shift our window against the peer's.
 */
export function atTime(dueMs: number, fn: () => void): { stop(): void } {
  let stopped = false;
  const spin = () => {
    while (!stopped && performance.now() < dueMs) {
      // spin: at most SPIN_MS
    }
    if (!stopped) fn();
  };
  const t = setTimeout(spin, Math.max(0, dueMs - performance.now() - SPIN_MS));
  return {
    stop() {
      stopped = true;
      clearTimeout(t);
    },
  };
}

const SPIN_MS = 4;
