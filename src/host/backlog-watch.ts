import type { BacklogSeen } from "./backlog-seen.ts";
import { median } from "../formulas.ts";
import { readShaper, type Shaper } from "./shaper.ts";


/**
 * Reads an interface's shaping qdisc (rtnetlink) every `everyMs` while started: what a load kept waiting in this
 * host's own queue. Nothing when the interface has no tbf or htb at its root, or the kernel cannot be asked.
 */
export class BacklogWatch {
  private readonly samples: number[] = [];
  private shaper: Shaper | undefined;
  private timer: ReturnType<typeof setInterval> | undefined;
  private reading = false;

  constructor(private readonly iface: string | undefined, private readonly everyMs = 200) {}

  start(): void {
    if (this.timer || this.iface === undefined) return;
    this.timer = setInterval(() => void this.read(), this.everyMs);
  }

  private async read(): Promise<void> {
    if (this.reading) return;
    this.reading = true;
    try {
      const s = await readShaper(this.iface);
      if (s?.backlog_bytes === undefined) return;
      this.shaper = s;
      this.samples.push(s.backlog_bytes);
    } finally {
      this.reading = false;
    }
  }

  stop(): BacklogSeen | undefined {
    clearInterval(this.timer);
    this.timer = undefined;
    const s = this.shaper;
    if (!s || this.samples.length === 0) return undefined;
    return { interface: s.interface, kind: s.kind, rate_bps: s.rate_bps, backlog_bytes: median(this.samples), backlog_max_bytes: Math.max(...this.samples) };
  }
}
