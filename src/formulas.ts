/**
 * Every figure anyperf prints, one small pure function each, with its formula. Dialects that reproduce a peer's
 * report compute its figures here too, so a formula is written (and tested against the peer's output) once.
 *
 * Convention: a rate or ratio over nothing (0 s, 0 packets, 0 bytes) is 0, as the peers print it (ntttcp:
 * "division by zero yields 0"; iperf3: lost_percent 0 without packets). Only a mean of no samples is NaN.
 */
import { CPU_MODES, type CpuMode, type CpuTimes } from "./host/proc-stat.ts";
import type { CyclesInputs } from "./host/window.ts";

function per(amount: number, over: number): number {
  return over > 0 ? amount / over : 0;
}

// --- throughput and rates ---------------------------------------------------------------------------------------

/** bits/s = bytes · 8 / seconds. (Same double as iperf3's bytes / seconds · 8: scaling by 8 is exact.) */
export function throughputBps(bytes: number, seconds: number): number {
  return per(bytes * 8, seconds);
}

/** bytes/s = bytes / seconds (ntttcp's "Bps"). */
export function bytesPerSecond(bytes: number, seconds: number): number {
  return per(bytes, seconds);
}

/** packets/s = packets / seconds. */
export function packetsPerSecond(packets: number, seconds: number): number {
  return per(packets, seconds);
}

/** packets/s a rate allows = bits/s / (packet bytes · 8) (iperf 2 -b with -l). */
export function packetsPerSecondAt(bitsPerSecond: number, packetBytes: number): number {
  return per(bitsPerSecond, packetBytes * 8);
}

/** Inter-packet gap (µs) = 10⁶ / packets per second (iperf 2 "IPG target"); 0 without a rate. */
export function interPacketGapUs(packetsPerSecond: number): number {
  return per(1e6, packetsPerSecond);
}

/** transactions/s = transactions / seconds (netperf RR "Trans. Rate"). */
export function transactionsPerSecond(transactions: number, seconds: number): number {
  return per(transactions, seconds);
}

/** memory per flow = (RSS with the flows open − RSS before they were opened) / flows; bytes. */
export function memoryPerFlowBytes(rssBefore: number, rssWith: number, flows: number): number {
  return per(rssWith - rssBefore, flows);
}

/**
 * Starvation: slowest flow's rate / fastest flow's rate, in 0..1 (1 = every flow got the same share). With no flow
 * moving at all it is 0, like any ratio over nothing.
 */
export function slowestToFastestRatio(rates: readonly number[]): number {
  let min = Infinity, max = 0;
  for (const r of rates) {
    if (r < min) min = r;
    if (r > max) max = r;
  }
  return per(min, max);
}

/** events/s = count / seconds: interrupts/s, DPCs/s, retransmits/s (ntttcp). */
export function eventsPerSecond(count: number, seconds: number): number {
  return per(count, seconds);
}

/** MB = bytes / 10⁶ (ntttcp-for-linux "MB", decimal). */
export function megabytes(bytes: number): number {
  return bytes / 1e6;
}

/** MB/s = bytes / 10⁶ / seconds (ntttcp-for-linux, decimal). */
export function megabytesPerSecond(bytes: number, seconds: number): number {
  return per(bytes / 1e6, seconds);
}

/** KB/s = bytes / 10³ / seconds (ntttcp-for-linux per-thread "KB/s", decimal). */
export function kilobytesPerSecond(bytes: number, seconds: number): number {
  return per(bytes / 1e3, seconds);
}

/** Mbit/s = bytes · 8 / 10⁶ / seconds (ntttcp "mbps", decimal on both platforms). */
export function megabitsPerSecond(bytes: number, seconds: number): number {
  return per((bytes * 8) / 1e6, seconds);
}

/** MiB = bytes / 1048576 (ntttcp for Windows "Bytes(MEG)", "MB"). */
export function mebibytes(bytes: number): number {
  return bytes / 1048576;
}

/** MiB/s = bytes / seconds / 1048576 (ntttcp for Windows "Throughput(MB/s)"). */
export function mebibytesPerSecond(bytes: number, seconds: number): number {
  return per(bytes, seconds) / 1048576;
}

/** KiB/s = bytes / seconds / 1024 (ntttcp for Windows per-thread "Throughput(KB/s)"). */
export function kibibytesPerSecond(bytes: number, seconds: number): number {
  return per(bytes, seconds) / 1024;
}

// --- per-operation averages (ntttcp) ----------------------------------------------------------------------------

/** Avg bytes per completion = bytes / counted I/O calls (ntttcp "Avg B / Compl"). */
export function bytesPerCompletion(bytes: number, completions: number): number {
  return per(bytes, completions);
}

/** Avg frame size = bytes / packets (ntttcp for Windows: packets sent on a sender, received on a receiver). */
export function avgFrameSize(bytes: number, packets: number): number {
  return per(bytes, packets);
}

/** Buffers = bytes / buffer length (ntttcp for Windows, -l). */
export function buffers(bytes: number, bufferLen: number): number {
  return per(bytes, bufferLen);
}

/** Buffers/s = bytes / buffer length / seconds (ntttcp for Windows "Throughput(Buffers/s)"). */
export function buffersPerSecond(bytes: number, bufferLen: number, seconds: number): number {
  return per(buffers(bytes, bufferLen), seconds);
}

/**
 * Packets per event = packets / events: Windows "Pkts(num/DPC)" and "Pkts(num/intr)" (packets received);
 * Linux "pkts/interrupt" ((tx + rx packets) / interrupts).
 */
export function packetsPerEvent(packets: number, events: number): number {
  return per(packets, events);
}

// --- link and window (diagnosis) ---------------------------------------------------------------------------------

/** Utilization % = 100 · throughput (bits/s) / capacity (bits/s): of a link's speed, or of a -b target; 0 without one. */
export function utilizationPercent(throughputBitsPerSecond: number, capacityBitsPerSecond: number): number {
  return per(100 * throughputBitsPerSecond, capacityBitsPerSecond);
}

/** Bandwidth-delay product (bytes) = rate (bits/s) · RTT (µs) / 10⁶ / 8: what must be in flight to fill the rate. */
export function bdpBytes(bitsPerSecond: number, rttUs: number): number {
  return (bitsPerSecond * rttUs) / 1e6 / 8;
}

/**
 * Where a TCP sender's time went, % (the kernel's chrono stats, include/net/tcp.h tcp_chrono): busy_time holds the
 * receive-window-limited and send-buffer-limited time; busy and neither is the network's (cwnd, pacing, the queue);
 * not busy is the application's (no data written). busy % = 100 · busy / elapsed, capped at 100 (busy_time counts in
 * jiffies); rwnd %, sndbuf % and network % are shares of busy; application % = 100 − busy %.
 */
export function senderTimeShares(elapsedUs: number, busyUs: number, rwndUs: number, sndbufUs: number) {
  const busy = Math.min(100, per(100 * busyUs, elapsedUs));
  const rwnd = per(100 * rwndUs, busyUs);
  const sndbuf = per(100 * sndbufUs, busyUs);
  return { busy_percent: busy, application_percent: 100 - busy, rwnd_limited_percent: rwnd, sndbuf_limited_percent: sndbuf, network_percent: busyUs > 0 ? Math.max(0, 100 - rwnd - sndbuf) : 0 };
}

/**
 * The path's bottleneck rate (bits/s) = max(delivery rate, goodput): the kernel's delivery rate is what the path
 * carried per round trip; the goodput went through the bottleneck too, so the path carries at least that.
 */
export function bottleneckBps(deliveryBps: number, throughputBps: number): number {
  return Math.max(deliveryBps, throughputBps);
}

/** Queueing delay the run added (µs) = smoothed RTT − min RTT, never below 0. */
export function queueingDelayUs(srttUs: number, minRttUs: number): number {
  return Math.max(0, srttUs - minRttUs);
}

/**
 * Round trips per minute (the IETF responsiveness draft's RPM) = 60 s / round trip: 60·10⁶ / µs; 0 without a round
 * trip. The draft averages several probe kinds; anyperf's probe is one TCP 1-byte request/response, its median.
 */
export function roundTripsPerMinute(roundTripUs: number): number {
  return per(60e6, roundTripUs);
}

/** A queue's delay (µs) = its bytes · 8 / the rate it drains at (bits/s) · 10⁶; 0 at no rate. */
export function queueDrainUs(backlogBytes: number, rateBps: number): number {
  return per(backlogBytes * 8 * 1e6, rateBps);
}

/** Latency added under load (µs) = loaded − idle; negative when the loaded phase measured less. */
export function addedLatencyUs(loadedUs: number, idleUs: number): number {
  return loadedUs - idleUs;
}

/** CPU per transaction (µs) = process CPU (% of one core) / 100 · 10⁶ / transactions per second; 0 without any. */
export function cpuPerTransactionUs(processPercent: number, transactionsPerSecond: number): number {
  return per((processPercent / 100) * 1e6, transactionsPerSecond);
}

/** Throttled % = 100 · periods in which the cgroup ran out of CPU quota / periods with runnable tasks (cpu.stat). */
export function throttledPercent(nrThrottled: number, nrPeriods: number): number {
  return per(100 * nrThrottled, nrPeriods);
}

// --- loss, latency, jitter --------------------------------------------------------------------------------------

/**
 * Loss % = 100 · lost / total (iperf3: total = the sender's datagrams; iperf 2: the datagrams the server counted;
 * diagnosis: TCP segments retransmitted / segments sent).
 */
export function lossPercent(lost: number, total: number): number {
  return per(100 * lost, total);
}

/**
 * Datagrams a sequenced UDP stream sent over a window, as its receiver sees them (iperf 2's Total column) = received
 * + lost − duplicates: the highest sequence number's advance, counted without the level (late arrivals are received
 * and lower the lost count; copies are received but were sent once).
 */
export function datagramsSent(received: number, lost: number, duplicates: number): number {
  return received + lost - duplicates;
}

/** Mean = Σ values / count (ntttcp for Windows threads_avg_bytes_per_compl, the mean MHz of a window); NaN for none. */
export function mean(values: readonly number[]): number {
  return values.length > 0 ? values.reduce((a, v) => a + v, 0) / values.length : NaN;
}

/** Mean latency = sum / count (µs in, µs out); NaN without samples. */
export function meanLatency(sumUs: number, count: number): number {
  return count > 0 ? sumUs / count : NaN;
}

/**
 * Latency pooled over several tests (netperf --instances): mean = Σ sums / Σ counts (every transaction weighs the
 * same), min = the smallest min, max = the largest max; µs. Percentiles come from the sum of the histograms.
 */
export function pooledLatency(parts: readonly { sumUs: number; count: number; minUs: number; maxUs: number }[]): { meanUs: number; minUs: number; maxUs: number } {
  const withSamples = parts.filter((p) => p.count > 0);
  return {
    meanUs: meanLatency(withSamples.reduce((a, p) => a + p.sumUs, 0), withSamples.reduce((a, p) => a + p.count, 0)),
    minUs: withSamples.length > 0 ? Math.min(...withSamples.map((p) => p.minUs)) : NaN,
    maxUs: withSamples.length > 0 ? Math.max(...withSamples.map((p) => p.maxUs)) : NaN,
  };
}

/** Samples as iperf 2's reporter summarises them (its reporter_update_mmm): count, sum, Σx², mean, min, max. */
export interface RunningStats {
  count: number;
  sum: number;
  sumSq: number;
  mean: number;
  min: number;
  max: number;
}

export const NO_SAMPLES: RunningStats = Object.freeze({ count: 0, sum: 0, sumSq: 0, mean: 0, min: 0, max: 0 });

/** One more sample: mean = Σx / n, min and max of the samples; the deviation is sampleStdev(count, sum, sumSq). */
export function runningStatsAdd(s: RunningStats, x: number): RunningStats {
  const count = s.count + 1;
  const sum = s.sum + x;
  return { count, sum, sumSq: s.sumSq + x * x, mean: sum / count, min: s.count ? Math.min(s.min, x) : x, max: s.count ? Math.max(s.max, x) : x };
}

/**
 * iperf 2 --bounceback "RPS" = round trips / the sum of their times (s): the rate one request at a time would run at
 * back to back (1 / mean RTT), not round trips over the interval; 0 without any.
 */
export function bouncebackRps(roundTrips: number, sumSeconds: number): number {
  return per(roundTrips, sumSeconds);
}

/**
 * iperf 2's histogram summary (histogram_print) over bins of counts (index 0 = the first bin; printed +1): the bins
 * where the running share first exceeds the lower and upper confidence bounds (`ci`, percent: 5 and 95 unless
 * --histograms names others) and 99.7 %, and the outliers: samples in bins beyond the upper fence + 3 × (upper −
 * lower fence), the fences being the last bins whose running share is below 10 % and 90 %. Shares are
 * single-precision, as iperf's float division.
 */
export function iperf2HistogramSummary(
  bins: ReadonlyMap<number, number>,
  binCount: number,
  ci: { lower: number; upper: number } = { lower: 5, upper: 95 },
  /** Samples outside the bins (below or beyond them): in the population the shares are of, as stock counts them. */
  outOfBounds = 0,
): { lower: number; upper: number; upper3Stdev: number; outliers: number } {
  const population = [...bins.values()].reduce((a, n) => a + n, outOfBounds);
  let running = 0, lower = 0, upper = 0, upper3Stdev = 0, outliers = 0, fenceLower = 0, fenceUpper = 0, outside = 0;
  for (const ix of [...bins.keys()].sort((a, b) => a - b)) {
    const n = bins.get(ix)!;
    if (n <= 0) continue;
    running += n;
    const share = Math.fround(running / population);
    if (!lower && share > ci.lower / 100) lower = ix + 1;
    if (share < 0.1) fenceLower = ix + 1;
    if (share < 0.9) fenceUpper = ix + 1;
    else if (!outside) outside = fenceUpper + 3 * (fenceUpper - fenceLower);
    else if (ix > outside) outliers += n;
    if (!upper && share > ci.upper / 100) upper = ix + 1;
    if (!upper3Stdev && share > 0.997) upper3Stdev = ix + 1;
  }
  return { lower, upper: upper || binCount, upper3Stdev: upper3Stdev || binCount, outliers };
}

/**
 * One RFC 1889 jitter update, as iperf3 and iperf 2 run it per datagram: J += (|D| − J) / 16, where D is the
 * difference between this datagram's transit time (arrival − send stamp) and the previous one's. Any unit.
 */
export function jitterStep(jitter: number, transitDelta: number): number {
  return jitter + (Math.abs(transitDelta) - jitter) / 16;
}

/**
 * iperf 2 "NetPwr" (network power) = throughput / delay = bytes / seconds / delay (s) · 10⁻⁶. The delay is the
 * sender's smoothed RTT from TCP_INFO (TCP -e) or the mean one-way latency (UDP -e). NaN without a delay (iperf 2
 * prints "NAN"), 0 over no time.
 */
export function iperf2NetPower(bytes: number, seconds: number, delaySeconds: number): number {
  if (!(delaySeconds > 0)) return NaN;
  return per(bytes, seconds) / delaySeconds / 1e6;
}

/**
 * iperf 2's bytes in progress ("inP", Little's law) = arrival rate × mean latency = bytes / seconds × latency (s):
 * what was in flight on average between the sender's write and our read. 0 over no time.
 */
export function iperf2InProgressBytes(bytes: number, seconds: number, meanLatencyS: number): number {
  return per(bytes, seconds) * meanLatencyS;
}

/**
 * Sample standard deviation from the count, Σx and Σx² of the samples = √((Σx² − (Σx)²/n) / (n − 1)), as iperf 2's
 * running M2 gives it (√(M2 / (n − 1))); 0 below two samples, where iperf 2 prints 0. Any unit (x's).
 */
export function sampleStdev(count: number, sum: number, sumSq: number): number {
  if (count < 2) return 0;
  return Math.sqrt(Math.max(0, sumSq - (sum * sum) / count) / (count - 1));
}

/** netperf RT_LATENCY (µs) = 10⁶ / transactions per second · (1 + first burst); TCP_CRR passes firstBurst 0. */
export function netperfRtLatencyUs(transactionsPerSecond: number, firstBurst = 0): number {
  return transactionsPerSecond > 0 ? (1e6 / transactionsPerSecond) * (1 + firstBurst) : 0;
}

// --- CPU ----------------------------------------------------------------------------------------------------------

/** Jiffies of every mode over a window; a mode absent from the delta (not printed, or gone backwards) counts 0. */
function jiffies(delta: CpuTimes): number {
  let sum = 0;
  for (const mode of CPU_MODES) sum += delta[mode] ?? 0;
  return sum;
}

/**
 * Share of one mode = 100 · Δmode / Δ(user + nice + system + idle + iowait + irq + softirq + steal), over the
 * jiffies a /proc/stat `cpu` line moved in a window (ntttcp-for-linux's user/system/idle/iowait/softirq %).
 */
export function cpuModePercent(delta: CpuTimes, mode: CpuMode): number {
  return per(100 * (delta[mode] ?? 0), jiffies(delta));
}

/** CPU busy % = 100 · (Δtotal − Δidle − Δiowait) / Δtotal: time waiting for I/O counts as idle (top, vmstat). */
export function cpuBusyPercent(delta: CpuTimes): number {
  const total = jiffies(delta);
  return per(100 * (total - (delta.idle ?? 0) - (delta.iowait ?? 0)), total);
}

/**
 * Non-idle fraction = (Δtotal − Δidle) / Δtotal, iowait counting as busy: ntttcp-for-linux's busy share for
 * cycles/byte (netperf's per-CPU utilisation is the same share as a percentage: 100 − the idle mode's %).
 */
export function cpuNonIdleFraction(delta: CpuTimes): number {
  const total = jiffies(delta);
  return per(total - (delta.idle ?? 0), total);
}

/**
 * Process CPU % = 100 · ticks / ticksPerSecond / seconds: user + system time of this process (all threads) over
 * wall time, so 100 = one core (iperf3 cpu_util_*, with getrusage µs: ticksPerSecond 1e6; ntttcp-for-linux
 * "cpu busy (all)", from clock(); /proc/self/stat: USER_HZ).
 */
export function processCpuPercent(ticks: number, ticksPerSecond: number, seconds: number): number {
  return per((100 * ticks) / ticksPerSecond, seconds);
}

/**
 * ntttcp-for-linux cycles/byte = MHz · 10⁶ · seconds · cores · busy fraction / bytes (0 without bytes): the CPU
 * cycles the whole machine spent busy, per byte moved. MHz is the first `cpu MHz` of /proc/cpuinfo, cores the
 * `cpuN` lines of /proc/stat, busy fraction cpuNonIdleFraction() over the window.
 */
export function cyclesPerByte(c: CyclesInputs, bytes: number): number {
  return per(c.mhz * 1e6 * c.seconds * c.cores * c.busyFraction, bytes);
}

/**
 * ntttcp for Windows Cycles/Byte = (Avg. CPU % / 100) · processors · MHz · 10⁶ / (bytes / seconds). NTttcp forms
 * MHz · 10⁶ in 32 bits, so above 4294 MHz it wraps (modulo 2³²); reproduced here.
 */
export function ntttcpWindowsCyclesPerByte(avgCpuPercent: number, processors: number, mhz: number, bytes: number, seconds: number): number {
  const hz = (mhz * 1e6) % 4294967296;
  return per((avgCpuPercent / 100) * processors * hz, bytesPerSecond(bytes, seconds));
}

// --- netperf ------------------------------------------------------------------------------------------------------

/**
 * netperf throughput = units / divisor / elapsed seconds, units = bytes for STREAM tests (divisor from -f: 125000
 * for the default 'm' = 10⁶ bits, 1024 for 'K', ...), transactions for RR (divisor 1).
 */
export function netperfThroughput(units: number, elapsedSeconds: number, divisor: number): number {
  return per(units / divisor, elapsedSeconds);
}

/**
 * netperf service demand (µs of CPU per unit) = cpu % · 10000 / (units / divisor / elapsed) · CPUs, units = bytes
 * with divisor 1024 (µs/KB) or transactions with divisor 1 (µs/Tr). netperf hands cpu % and elapsed to this
 * formula as C floats, so they are rounded to float32 here too. Pass the local CPU count when the remote reports 0.
 */
export function netperfServiceDemand(cpuUtilPercent: number, units: number, divisor: number, elapsedSeconds: number, numCpus: number): number {
  const thruput = units / divisor / Math.fround(elapsedSeconds);
  return thruput > 0 ? ((Math.fround(cpuUtilPercent) * 10000) / thruput) * numCpus : 0;
}

// --- socket buffers -----------------------------------------------------------------------------------------------

/**
 * What Linux getsockopt reports after setsockopt(SO_SNDBUF/SO_RCVBUF, requested) = 2 · min(requested, the
 * net.core.wmem_max/rmem_max ceiling): the kernel caps the value, then doubles it for its own bookkeeping
 * (socket(7)). Sizes below the kernel's floor (a few KiB) are raised to it; this is not modelled.
 */
export function linuxSocketBufferBytes(requested: number, sysctlMax: number): number {
  return 2 * Math.min(requested, sysctlMax);
}

// --- repeated runs (--repeat, --sweep) ---------------------------------------------------------------------------

/** Median: the middle of the sorted values, the mean of the two middle ones for an even count; NaN for none. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Relative spread % = 100 · (max − min) / median; 0 over a median of 0 (convention above). */
export function relativeSpreadPercent(min: number, max: number, med: number): number {
  return per(100 * (max - min), Math.abs(med));
}

/** Change % = 100 · (after − before) / before (compare: run B against run A); 0 from a 0 baseline. */
export function changePercent(before: number, after: number): number {
  return per(100 * (after - before), Math.abs(before));
}

/**
 * A figure of concurrent instances (netperf --instances), or of a run over many servers (`anyperf client H1 H2 ...`)
 * = Σ each instance's (server's) figure over the same window.
 */
export function concurrentSum(values: readonly number[]): number {
  return values.reduce((a, v) => a + v, 0);
}

/** One interim figure: `rate` per second over the `seconds` that ended at `endS` (netperf -D's interim lines). */
export interface InterimRate {
  rate: number;
  seconds: number;
  endS: number;
}

/**
 * What interim figures counted inside [fromS, toS] = Σ rate · (the part of its interval inside the window), each
 * interval taken at its own rate throughout.
 */
export function countInWindow(interims: readonly InterimRate[], fromS: number, toS: number): number {
  let n = 0;
  for (const { rate, seconds, endS } of interims) n += rate * Math.max(0, Math.min(endS, toS) - Math.max(endS - seconds, fromS));
  return n;
}

/**
 * iperf 2's "Client traffic to start in N seconds": the seconds from now to the --txstart-time epoch, rounded up
 * (2.1.8 printed 2 for a start 1.64 s ahead); the "at" time it prints is now's whole second plus N.
 */
export function secondsUntilStart(startEpochS: number, nowEpochS: number): number {
  return Math.ceil(startEpochS - nowEpochS);
}

/**
 * iperf 2.1.8's "[ CT] final connect times (min/avg/max/stdev) = ... ms": connect() times in ms; the stdev it prints
 * is the sample standard deviation in microseconds under the "ms" label (0.014, 0.037, 1.176 ms print 664.341).
 * Printed from three connections on (null below).
 */
export function connectTimesSummary(ms: readonly number[]): { minMs: number; avgMs: number; maxMs: number; stdevPrinted: number } | null {
  if (ms.length < 3) return null;
  const sum = ms.reduce((a, b) => a + b, 0);
  const sumSq = ms.reduce((a, b) => a + b * b, 0);
  return { minMs: Math.min(...ms), avgMs: sum / ms.length, maxMs: Math.max(...ms), stdevPrinted: sampleStdev(ms.length, sum, sumSq) * 1000 };
}
