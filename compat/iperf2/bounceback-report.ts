import { type RunningStats, bouncebackRps, sampleStdev } from "../../src/formulas.ts";
import { pdfLine } from "./pdf-line.ts";
import { formatFixed } from "../../src/units.ts";
import type { Bounceback } from "./plan.ts";
import type { TcpWriteStats } from "./tcp-stats.ts";
import { RULE, bufferLine, idTag, intervalText, transferAndRate } from "./text-report.ts";
import { type FormatLetter, formatUnits } from "./units.ts";

/** iperf 2.1.8's --bounceback client lines (it implies -e); pure functions of the figures. */

export const HEADER_BB = "[ ID] Interval            Transfer    Bandwidth         BB cnt=avg/min/max/stdev         Rtry  Cwnd/RTT    RPS";

/** Round-trip histogram bins: 100 µs wide, 100000 of them (10 s), as the stock client's "BB8" histogram. */
export const BB_BIN_US = 100;
const BB_BINS = 100_000;

const bytesText = (n: number) => formatUnits(n, "A");

export function bouncebackBanner(o: { host: string; port: number; pid: number; bb: Bounceback; tos: number; buffer: number; requested?: number }): string[] {
  const { bb } = o;
  const hold = `(server hold req=${bb.holdUs} usecs${bb.quickAck ? " & tcp_quickack" : ""})`;
  const lines = [RULE, `Client connecting to ${o.host}, TCP port ${o.port} with pid ${o.pid} (1 flows)`, `Write buffer size: ${bytesText(bb.size)}`];
  if (bb.periodS > 0) lines.push(`Bursting: ${bytesText(bb.size)} writes ${bb.burst} times every ${formatFixed(bb.periodS, 2)} second(s)`);
  // 2.1.8 has no reply size of its own: a test that asks for one is named in 2.2.1's words.
  lines.push(bb.replySize === bb.size ? `Bounce-back test (size=${bytesText(bb.size)}) ${hold}` : `Bounceback test (req/reply size =${bytesText(bb.size)}/${bytesText(bb.replySize)}) ${hold}`);
  lines.push(`TOS set to 0x${o.tos.toString(16)} and nodelay (Nagle off)`, bufferLine({ udp: false, buffer: o.buffer, requested: o.requested }), RULE);
  return lines;
}

export interface BouncebackFigures {
  id: number;
  start: number;
  end: number;
  /** Both ways, of whole round trips. */
  bytes: number;
  /** Round trips in seconds. */
  trips: RunningStats;
  tcp: TcpWriteStats;
}

/** RPS with one decimal below 10, none above (stock's "%0.1f" / "%0.0f"). */
function rpsText(trips: RunningStats): string {
  const rps = bouncebackRps(trips.count, trips.sum);
  return formatFixed(rps, rps < 10 ? 1 : 0);
}

/** "10=0.438/0.028/3.874/1.208 ms": min, max and deviation are 0 below two round trips, as stock prints them. */
export function bouncebackLine(f: BouncebackFigures, format: FormatLetter): string {
  const t = f.trips;
  const ms = (s: number) => formatFixed(s * 1000, 3);
  const two = t.count >= 2;
  const window = f.tcp.cwndK === null ? `   NA/${f.tcp.rttUs} us` : ` ${String(f.tcp.cwndK).padStart(4)}K/${f.tcp.rttUs} us`;
  return (
    `${idTag(f.id)} ${intervalText(f.start, f.end)}  ${transferAndRate(f.bytes, f.end - f.start, format)}    ` +
    `${t.count}=${ms(t.mean)}/${ms(two ? t.min : 0)}/${ms(two ? t.max : 0)}/${ms(two ? sampleStdev(t.count, t.sum, t.sumSq) : 0)} ms ` +
    `${String(f.tcp.retry).padStart(4)}${window}    ${rpsText(t)} rps`
  );
}

/** The bin of a round trip (index from 0; printed from 1); null beyond the histogram's 10 s (stock's "obu"). */
export function bouncebackBin(seconds: number): number | null {
  const bin = Math.floor((seconds * 1e6) / BB_BIN_US);
  return bin < BB_BINS ? bin : null;
}

/** The final line's round-trip histogram: "BB8(f)-PDF: bin(w=100us):cnt(20)=1:17,2:1 (5.00/95.00/99.7%=1/2/2,...)". */
export function bouncebackPdfLine(id: number, start: number, end: number, bins: ReadonlyMap<number, number>, outOfBounds: { low: number; high: number }): string {
  return pdfLine(id, start, end, bins, { label: "BB8(f)", binText: `${BB_BIN_US}us`, binCount: BB_BINS, lowerCi: 5, upperCi: 95 }, outOfBounds);
}
