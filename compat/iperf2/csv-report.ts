import { lossPercent, throughputBps } from "../../src/formulas.ts";
import { formatFixed } from "../../src/units.ts";
import type { Endpoint } from "./text-report.ts";

/**
 * iperf 2 `-y C` lines (no header row, one line per stream report):
 *   TCP: timestamp,src_ip,src_port,dst_ip,dst_port,id,start-end,bytes,bits_per_second
 *   UDP: ... ,jitter_ms,lost,total,lost_percent,out_of_order
 * The client endpoint comes first on both sides. The fields are plain numbers with no quoting, so they are joined
 * here rather than through a CSV library.
 */

/**
 * YYYYMMDDHHMMSS in local time, with -e (`millis`) followed by .mmm as 2.1.8 prints it; the stock server prints
 * 19700101000000 (.000) on final lines when -i was not given.
 */
export function csvTimestamp(d: Date | null, millis = false): string {
  const p = (n: number, w = 2) => String(n).padStart(w, "0");
  const s = d === null ? "19700101000000" : `${p(d.getFullYear(), 4)}${p(d.getMonth() + 1)}${p(d.getDate())}${p(d.getHours())}${p(d.getMinutes())}${p(d.getSeconds())}`;
  return millis ? `${s}.${p(d?.getMilliseconds() ?? 0, 3)}` : s;
}

/** A final line's time: stock 2.1.8 (client and server) leaves it at the epoch unless -i was given. */
export function finalCsvTime(intervalS: number): Date | null {
  return intervalS > 0 ? new Date() : null;
}

export interface CsvFigures {
  at: Date | null;
  client: Endpoint;
  server: Endpoint;
  id: number;
  start: number;
  end: number;
  bytes: number;
  /** -e: the timestamp carries milliseconds. */
  millis?: boolean;
}

export interface CsvUdpFigures extends CsvFigures {
  jitterS: number;
  lost: number;
  total: number;
  outOfOrder: number;
}

/** Integer bits per second, truncated like iperf's integer conversion. */
export function csvBitsPerSecond(bytes: number, seconds: number): number {
  return Math.floor(throughputBps(bytes, seconds));
}

export function csvTcpLine(f: CsvFigures): string {
  return [
    csvTimestamp(f.at, f.millis),
    f.client.host,
    f.client.port,
    f.server.host,
    f.server.port,
    f.id,
    `${formatFixed(f.start, 1)}-${formatFixed(f.end, 1)}`,
    Math.round(f.bytes),
    csvBitsPerSecond(f.bytes, f.end - f.start),
  ].join(",");
}

export function csvUdpLine(f: CsvUdpFigures): string {
  return [csvTcpLine(f), formatFixed(f.jitterS * 1000, 3), f.lost, f.total, formatFixed(lossPercent(f.lost, f.total), 3), f.outOfOrder].join(",");
}
