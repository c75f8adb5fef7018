/**
 * One stderr line per refused connection, rate-limited: a scan or a flood of 1000 connects from outside the
 * allow-list costs a few lines and one summary per window, not 1000 lines.
 */
export class RefusalLog {
  private windowStart = -Infinity;
  private inWindow = 0;
  private suppressed = 0;

  constructor(
    private readonly write: (line: string) => void,
    private readonly opts: { perWindow?: number; windowMs?: number; now?: () => number } = {},
  ) {}

  private get perWindow(): number {
    return this.opts.perWindow ?? 10;
  }

  private get windowMs(): number {
    return this.opts.windowMs ?? 10_000;
  }

  /** `line` is the whole message, e.g. "refused 10.1.2.3 port 4242: not in --allow". */
  refused(line: string): void {
    const now = (this.opts.now ?? performance.now.bind(performance))();
    if (now - this.windowStart >= this.windowMs) {
      this.flush();
      this.windowStart = now;
      this.inWindow = 0;
    }
    if (this.inWindow < this.perWindow) {
      this.inWindow++;
      this.write(line);
      return;
    }
    // The summary also comes when the flood stops, not only with the next refusal.
    if (this.suppressed++ === 0) {
      const t = setTimeout(() => this.flush(), Math.max(0, this.windowStart + this.windowMs - now));
      (t as { unref?: () => void }).unref?.();
    }
  }

  /** Prints how many lines the last window held back (also called when a new window opens). */
  flush(): void {
    if (this.suppressed === 0) return;
    this.write(`... and ${this.suppressed} more refused connection${this.suppressed === 1 ? "" : "s"} in ${this.windowMs / 1000} s`);
    this.suppressed = 0;
  }
}
