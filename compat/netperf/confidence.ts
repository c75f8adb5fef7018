import { sprintf } from "./printf.ts";

/**
 * netperf's confidence intervals (-i max,min, -I level,width, global -r): after each round the mean and the
 * population variance of throughput and of both CPU utilisations are updated; the half-width of the Student's t
 * interval, relative to the mean, is compared with the width asked for. netperf runs at least `min` rounds and at
 * most `max`, stopping early once every watched figure is narrow enough.
 */

/** Two-sided Student's t quantiles for 1..30 degrees of freedom at 95 % and 99 % (netperf tabulates the same). */
const T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131, 2.12, 2.11, 2.101, 2.093, 2.086, 2.08, 2.074, 2.069, 2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042];
const T99 = [63.657, 9.925, 5.841, 4.604, 4.032, 3.707, 3.499, 3.355, 3.25, 3.169, 3.106, 3.055, 3.012, 2.977, 2.947, 2.921, 2.898, 2.878, 2.861, 2.845, 2.831, 2.819, 2.807, 2.797, 2.787, 2.779, 2.771, 2.763, 2.756, 2.75];

export function tQuantile(level: number, freedom: number): number {
  const table = level === 95 ? T95 : level === 99 ? T99 : undefined;
  return table?.[freedom - 1] ?? 0;
}

/** One round's figures as netperf feeds them to its statistics (CPU and service demand -1 when not measured). */
export interface RoundFigures {
  elapsed: number;
  thruput: number;
  localCpuUtil: number;
  remoteCpuUtil: number;
}

/** C's min macro, `a < b ? a : b`: with a NaN it returns the second operand, which decides netperf's outcome. */
const cMin = (a: number, b: number) => (a < b ? a : b);

/** netperf's value of a figure's confidence before two rounds exist. */
const UNKNOWN = -10;

class Moments {
  private sum = 0;
  private squares = 0;
  add(x: number): void {
    this.sum += x;
    this.squares += x * x;
  }
  mean(n: number): number {
    return this.sum / n;
  }
  /** Population variance as netperf computes it (mean of squares minus square of mean; may round below 0). */
  variance(n: number): number {
    const m = this.mean(n);
    return this.squares / n - m * m;
  }
}

export class ConfidenceTracker {
  private n = 0;
  private readonly result = new Moments();
  private readonly localCpu = new Moments();
  private readonly remoteCpu = new Moments();
  private resultConfid = UNKNOWN;
  private localCpuConfid = UNKNOWN;
  private remoteCpuConfid = UNKNOWN;
  /** netperf's `confidence`: below 0 while the interval is still too wide. */
  confidence = UNKNOWN;

  constructor(
    private readonly level: number,
    /** The full width asked for, as a fraction of the mean (-I 99,5 → 0.05). */
    private readonly interval: number,
    private readonly resultOnly: boolean,
  ) {}

  get rounds(): number {
    return this.n;
  }

  add(f: RoundFigures): void {
    this.n++;
    this.result.add(f.thruput);
    this.localCpu.add(f.localCpuUtil);
    this.remoteCpu.add(f.remoteCpuUtil);
    if (this.n < 2) return;
    const t = tQuantile(this.level, this.n - 1);
    // Unmeasured CPU is -1 every round: variance 0, so its confidence equals the interval and never holds us back.
    const confid = (m: Moments) => this.interval - (2 * t * Math.sqrt(m.variance(this.n) / (this.n - 1))) / m.mean(this.n);
    this.resultConfid = confid(this.result);
    this.localCpuConfid = confid(this.localCpu);
    this.remoteCpuConfid = confid(this.remoteCpu);
    this.confidence = this.resultOnly ? this.resultConfid : cMin(cMin(this.resultConfid, this.localCpuConfid), this.remoteCpuConfid);
  }

  /** netperf's loop condition, asked after a round: run another one? */
  wantsAnother(iterationMin: number, iterationMax: number): boolean {
    const next = this.n + 1;
    return (this.confidence < 0 && next <= iterationMax) || next <= iterationMin;
  }

  /** Whether the desired confidence was missed (netperf's `confidence < 0`; a NaN counts as reached, as in C). */
  get missed(): boolean {
    return this.confidence < 0;
  }

  /** The achieved widths in percent, as the warning and the *_CONFID selectors print them. */
  widthsPct(): { result: number; localCpu: number; remoteCpu: number } {
    return {
      result: 100 * (this.interval - this.resultConfid),
      localCpu: 100 * (this.interval - this.localCpuConfid),
      remoteCpu: 100 * (this.interval - this.remoteCpuConfid),
    };
  }
}

/** The block netperf prints before a legacy result whose confidence was missed. */
export function confidenceWarning(w: { result: number; localCpu: number; remoteCpu: number }): string {
  return sprintf(
    "!!! WARNING\n" +
      "!!! Desired confidence was not achieved within the specified iterations.\n" +
      "!!! This implies that there was variability in the test environment that\n" +
      "!!! must be investigated before going further.\n" +
      "!!! Confidence intervals: Throughput      : %4.3f%%\n" +
      "!!!                       Local CPU util  : %4.3f%%\n" +
      "!!!                       Remote CPU util : %4.3f%%\n\n",
    w.result,
    w.localCpu,
    w.remoteCpu,
  );
}
