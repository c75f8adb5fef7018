import { AppendLog, checkOutputPath } from "../../src/report/atomic-file.ts";

/**
 * Where report lines go (stdout, or the -o file), with iperf 2's rule for the "[ ID] Interval ..." heading: it is
 * printed before a report line whenever the heading differs from the last one printed, or when connection or banner
 * lines came in between (so a -r test prints it again after the reverse banner, and "Server Report:" blocks of -P
 * streams share one).
 */
export class Printer {
  private lastHeading: string | null = null;
  private dirty = true;

  constructor(
    private readonly sink: (text: string) => void,
    /** -y C: only CSV lines are printed; banners, headings and text reports are dropped. */
    private readonly csv: boolean,
    /** Where iperf 2's stderr lines go: stderr, or with -o the same file. */
    private readonly errSink: (text: string) => void = sink,
  ) {}

  /**
   * -o FILE: iperf 2 says where the output goes, starts the file anew (its freopen mode is "w") and writes the run
   * into it; here through an AppendLog, so a reader (or a kill) never finds half a report block in the file.
   */
  static to(output: string | undefined, csv: boolean): Printer {
    if (!output) return new Printer((t) => process.stdout.write(t), csv, (t) => process.stderr.write(t));
    process.stdout.write(`Output from stdout and stderr will be redirected to file ${output}\n`);
    checkOutputPath("-o", output);
    const log = new AppendLog(output, { flag: "-o", fresh: true });
    return new Printer((t) => log.append(t), csv);
  }

  /** Banners, connection lines, warnings. */
  info(...lines: string[]): void {
    if (this.csv) return;
    for (const l of lines) this.sink(`${l}\n`);
    this.dirty = true;
  }

  /** A line iperf 2 writes to stderr (warnings about a test's end), whatever the report format. */
  warning(line: string): void {
    this.errSink(`${line}\n`);
  }

  /** A report line under `heading` (null: a line that belongs to the current block, like "Sent N datagrams"). */
  report(heading: string | null, line: string): void {
    if (this.csv) return;
    if (heading !== null && (this.dirty || heading !== this.lastHeading)) {
      this.sink(`${heading}\n`);
      this.lastHeading = heading;
    }
    this.dirty = false;
    this.sink(`${line}\n`);
  }

  csvLine(line: string): void {
    if (this.csv) this.sink(`${line}\n`);
  }
}
