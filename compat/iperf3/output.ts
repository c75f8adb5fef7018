/**
 * Where the iperf3 dialect prints: stdout (or --logfile, appended), errors to stderr, each line optionally prefixed
 * by --timestamps' strftime format. Writes are synchronous so lines keep their order across tests and exits.
 * --logfile is an AppendLog: what one turn prints (an interval's lines, a summary, a -J document) lands in the file
 * as one block at the end of that turn, so a server's log shows each interval promptly and never half of one.
 */
import { writeSync } from "node:fs";
import { UserError } from "../../src/errors.ts";
import { AppendLog } from "../../src/report/atomic-file.ts";
import { outputDead, outputFailed } from "../../src/output-failure.ts";

const DAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const p2 = (n: number) => String(n).padStart(2, "0");

/** The strftime conversions iperf3 users put in --timestamps (C locale, local time). */
export function strftime(format: string, d: Date): string {
  return format.replace(/%([a-zA-Z%])/g, (m, c: string) => {
    switch (c) {
      case "Y": return String(d.getFullYear());
      case "m": return p2(d.getMonth() + 1);
      case "d": return p2(d.getDate());
      case "e": return String(d.getDate()).padStart(2, " ");
      case "H": return p2(d.getHours());
      case "M": return p2(d.getMinutes());
      case "S": return p2(d.getSeconds());
      case "T": return `${p2(d.getHours())}:${p2(d.getMinutes())}:${p2(d.getSeconds())}`;
      case "F": return `${d.getFullYear()}-${p2(d.getMonth() + 1)}-${p2(d.getDate())}`;
      case "a": return DAYS[d.getDay()]!;
      case "b": return MONTHS[d.getMonth()]!;
      case "s": return String(Math.floor(d.getTime() / 1000));
      case "c": return `${DAYS[d.getDay()]} ${MONTHS[d.getMonth()]} ${String(d.getDate()).padStart(2, " ")} ${p2(d.getHours())}:${p2(d.getMinutes())}:${p2(d.getSeconds())} ${d.getFullYear()}`;
      case "%": return "%";
      default: return m;
    }
  });
}

export class Output {
  private readonly log: AppendLog | undefined;

  /**
   * `write`: where lines go instead of stdout/stderr (a server embedded in `anyperf serve`); `title`: -T, put before
   * every line the client prints as text (after a --timestamps stamp; errors go bare).
   */
  constructor(private readonly opts: { logfile?: string; timestamps?: string; write?: (text: string) => void; title?: string } = {}) {
    try {
      this.log = opts.logfile === undefined ? undefined : new AppendLog(opts.logfile, { flag: "--logfile" });
    } catch (e) {
      // 3.12's wording, with the system's reason after the colon.
      throw new UserError(`unable to open log file: ${(e as Error).message}; pass a --logfile path in a writable directory`, 1);
    }
  }

  private stamp(text: string): string {
    const fmt = this.opts.timestamps;
    if (fmt === undefined || text === "") return text;
    const prefix = strftime(fmt, new Date());
    return text.replace(/^(?=.)/gm, prefix);
  }

  /** Every line, empty ones too (stock prints "hi:  " before the blank line above "iperf Done."). */
  private titled(text: string): string {
    const title = this.opts.title;
    if (title === undefined) return text;
    return text.replace(/^(?=[^\n]|\n)/gm, `${title}:  `);
  }

  out(text: string): void {
    if (text === "") return;
    const t = this.stamp(this.titled(text));
    if (this.log) this.log.append(t);
    else if (this.opts.write) this.opts.write(t);
    else writeAll(1, t);
  }

  err(text: string): void {
    if (text === "") return;
    const t = this.stamp(text);
    if (this.log) this.log.append(t);
    else if (this.opts.write) this.opts.write(t);
    else writeAll(2, t);
  }
}

const PAUSE = new Int32Array(new SharedArrayBuffer(4));

function writeAll(fd: 1 | 2, text: string): void {
  const stream = fd === 1 ? "stdout" : "stderr";
  if (outputDead(stream)) return;
  const b = Buffer.from(text);
  let off = 0;
  while (off < b.length) {
    try {
      off += writeSync(fd, b, off);
    } catch (e) {
      const code = (e as { code?: string }).code;
      // A non-blocking pipe that is full says EAGAIN; wait for the reader instead of dropping report lines.
      // Anything else ends the run as for every mode (the reader gone: quietly, exit 141 as 3.12 killed by SIGPIPE).
      if (code !== "EAGAIN") return outputFailed(stream, e);
      Atomics.wait(PAUSE, 0, 0, 1);
    }
  }
}
