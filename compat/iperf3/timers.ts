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
