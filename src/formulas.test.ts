import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import {
  connectTimesSummary,
  secondsUntilStart,
  NO_SAMPLES,
  iperf2HistogramSummary,
  bouncebackRps,
  runningStatsAdd,
  memoryPerFlowBytes,
  slowestToFastestRatio,
  avgFrameSize,
  bdpBytes,
  bottleneckBps,
  cpuPerTransactionUs,
  pooledLatency,
  buffers,
  buffersPerSecond,
  bytesPerCompletion,
  bytesPerSecond,
  cpuBusyPercent,
  cpuModePercent,
  changePercent,
  concurrentSum,
  countInWindow,
  linuxSocketBufferBytes,
  cpuNonIdleFraction,
  median,
  queueingDelayUs,
  roundTripsPerMinute,
  sampleStdev,
  queueDrainUs,
  addedLatencyUs,
  senderTimeShares,
  throttledPercent,
  relativeSpreadPercent,
  cyclesPerByte,
  eventsPerSecond,
  interPacketGapUs,
  iperf2InProgressBytes,
  iperf2NetPower,
  jitterStep,
  kibibytesPerSecond,
  kilobytesPerSecond,
  lossPercent,
  datagramsSent,
  mean,
  meanLatency,
  mebibytes,
  mebibytesPerSecond,
  megabitsPerSecond,
  megabytes,
  megabytesPerSecond,
  netperfRtLatencyUs,
  netperfServiceDemand,
  netperfThroughput,
  ntttcpWindowsCyclesPerByte,
  packetsPerEvent,
  packetsPerSecond,
  packetsPerSecondAt,
  processCpuPercent,
  throughputBps,
  transactionsPerSecond,
  utilizationPercent,
} from "./formulas.ts";
import { formatFixed } from "./units.ts";

const testdata = (name: string) => readFileSync(new URL(`./testdata/formulas/${name}`, import.meta.url), "utf8");

/**
 * A peer printed `printed` (a fixed-point number) for f(inputs), where some inputs are only known within a range
 * (they were themselves printed rounded). Passes when some value of f over the box of inputs rounds to `printed`;
 * f must be monotonic in each input. Also checks that the box is narrower than one printed digit, or the test
 * could not fail.
 */
function expectPrinted(printed: string, f: (...x: number[]) => number, ranges: [number, number][]) {
  const values: number[] = [];
  for (let corner = 0; corner < 1 << ranges.length; corner++) values.push(f(...ranges.map((r, i) => r[(corner >> i) & 1]!)));
  const lo = Math.min(...values);
  const hi = Math.max(...values);
  const decimals = printed.includes(".") ? printed.length - printed.indexOf(".") - 1 : 0;
  const half = 0.5 * 10 ** -decimals;
  expect(hi - lo).toBeLessThan(2 * half);
  const p = Number(printed);
  if (!(lo <= p + half && hi >= p - half)) expect(`${printed} from [${lo}, ${hi}]`).toBe(printed);
}

/**
 * A peer printed `printed` for f(amount, seconds) where the seconds are only known within `range`, a range too wide
 * for expectPrinted: the printed figure must lie between f at the two ends (and a wrong formula lands far outside).
 */
function expectWithin(printed: number, f: (amount: number, seconds: number) => number, amount: number, range: [number, number]) {
  const [a, b] = range.map((s) => f(amount, s)) as [number, number];
  expect(printed).toBeWithin(Math.min(a, b), Math.max(a, b));
}

/** x printed with `decimals` decimals covers [x − h, x + h]. */
const plusMinus = (x: number, decimals: number): [number, number] => [x - 0.5 * 10 ** -decimals, x + 0.5 * 10 ** -decimals];

describe("hand-computed", () => {
  test("throughput and rates", () => {
    expect(throughputBps(1_250_000, 1)).toBe(10e6);
    expect(throughputBps(5111808, 2)).toBe(20447232);
    expect(throughputBps(100, 0)).toBe(0);
    expect(bytesPerSecond(3000, 1.5)).toBe(2000);
    expect(packetsPerSecond(93, 0.5)).toBe(186);
    expect(transactionsPerSecond(74212, 2)).toBe(37106);
    expect(transactionsPerSecond(5, 0)).toBe(0);
    expect(eventsPerSecond(19, 2)).toBe(9.5);
    expect(megabytes(14328179539)).toBe(14328.179539);
    expect(megabytesPerSecond(4e6, 2)).toBe(2);
    expect(kilobytesPerSecond(3000, 3)).toBe(1);
    expect(megabitsPerSecond(1e6, 4)).toBe(2);
    expect(mebibytes(3 * 1048576)).toBe(3);
    expect(mebibytesPerSecond(10 * 1048576, 4)).toBe(2.5);
    expect(kibibytesPerSecond(4096, 2)).toBe(2);
    expect(megabitsPerSecond(1, 0)).toBe(0);
  });

  test("per-operation averages over nothing are 0", () => {
    expect(bytesPerCompletion(100, 0)).toBe(0);
    expect(avgFrameSize(100, 0)).toBe(0);
    expect(packetsPerEvent(5, 0)).toBe(0);
    expect(buffersPerSecond(100, 10, 0)).toBe(0);
    expect(interPacketGapUs(0)).toBe(0);
    expect(packetsPerSecondAt(1e6, 0)).toBe(0);
  });

  test("loss, latency, jitter", () => {
    expect(lossPercent(5, 51)).toBe((100 * 5) / 51); // iperf 2 printed "5/51 (9.8%)"
    expect(lossPercent(1, 4)).toBe(25);
    expect(lossPercent(0, 0)).toBe(0);
    // Stock 2.1.8's server interval "131 KBytes ... 1/92": 91 datagrams of 1470 bytes (133770 bytes) and one lost.
    expect(datagramsSent(91, 1, 0)).toBe(92);
    expect(datagramsSent(90, 0, 1)).toBe(89);
    expect(meanLatency(2969, 93)).toBe(2969 / 93);
    expect(mean([65536, 61440.5])).toBe(63488.25);
    expect(mean([])).toBeNaN();
    expect(meanLatency(0, 0)).toBeNaN();
    // J += (|D| - J) / 16, with binary fractions so every step is exact.
    let j = jitterStep(0, 16);
    expect(j).toBe(1);
    j = jitterStep(j, 0);
    expect(j).toBe(0.9375);
    j = jitterStep(j, -32);
    expect(j).toBe(0.9375 + (32 - 0.9375) / 16);
    expect(j).toBe(2.87890625);
    // A constant transit difference d converges to d.
    let k = 0;
    for (let i = 0; i < 2000; i++) k = jitterStep(k, 5e-6);
    expect(k).toBeCloseTo(5e-6, 15);
    expect(netperfRtLatencyUs(37101.29)).toBe(1e6 / 37101.29);
    expect(netperfRtLatencyUs(1000, 3)).toBe(4000);
    expect(netperfRtLatencyUs(0)).toBe(0);
  });

  // No capture prints the jiffies a peer read, so the /proc/stat shares are checked by hand.
  test("CPU from the jiffies a /proc/stat line moved", () => {
    // user 60, system 60, idle 20, iowait 20, softirq 40; total 200.
    const d = { user: 60, nice: 0, system: 60, idle: 20, iowait: 20, irq: 0, softirq: 40, steal: 0 };
    expect(cpuModePercent(d, "user")).toBe(30);
    expect(cpuModePercent(d, "idle")).toBe(10);
    expect(cpuModePercent(d, "softirq")).toBe(20);
    expect(cpuBusyPercent(d)).toBe(80); // 100 · (1 − (20 + 20) / 200)
    expect(cpuNonIdleFraction(d)).toBe(0.9); // 1 − 20 / 200: iowait is busy for ntttcp and netperf
    // Modes an old kernel does not print count as 0; no elapsed jiffies gives 0.
    expect(cpuModePercent({ user: 3, idle: 1 }, "user")).toBe(75);
    const none = { user: 0, idle: 0 };
    expect([cpuModePercent(none, "user"), cpuBusyPercent(none), cpuNonIdleFraction(none)]).toEqual([0, 0, 0]);
  });

  test("process CPU", () => {
    expect(processCpuPercent(150, 100, 1)).toBe(150); // 1.5 s of CPU in 1 s: one and a half cores
    expect(processCpuPercent(250_000, 1e6, 2)).toBe(12.5); // getrusage µs
    expect(processCpuPercent(5, 100, 0)).toBe(0);
  });

  test("cycles per byte", () => {
    // 2 cores at 2500 MHz, 90 % busy for 2 s = 9e9 cycles, over 3e9 bytes.
    expect(cyclesPerByte({ mhz: 2500, busyFraction: 0.9, cores: 2, seconds: 2 }, 3e9)).toBe(3);
    expect(cyclesPerByte({ mhz: 2500, busyFraction: 0.9, cores: 2, seconds: 2 }, 0)).toBe(0);
  });

  test("netperf", () => {
    expect(netperfThroughput(2.5e9, 2, 125000)).toBe(10000); // 10^6 bits/s
    expect(netperfThroughput(2 * 1048576, 2, 1048576)).toBe(1); // MBytes/s
    expect(netperfThroughput(100, 0, 1)).toBe(0);
    // docs/protocols/netperf.md §8: 99.75 % on 2 CPUs at 57775.72 trans/s -> 34.530 us/Tr.
    expect(formatFixed(netperfServiceDemand(99.75, 57775.72, 1, 1, 2), 3)).toBe("34.530");
    // Stream: 50 % of 1 CPU while moving 100 MiB/s = 102400 KB/s: 0.5 s of CPU per s / 102400 KB = 4.8828125 us/KB.
    expect(netperfServiceDemand(50, 100 * 1048576, 1024, 1, 1)).toBe(4.8828125);
    expect(netperfServiceDemand(50, 0, 1024, 1, 1)).toBe(0);
    // cpu % and elapsed go through C floats: neither 0.1 s nor 80.24 % is the same number in float32.
    expect(netperfServiceDemand(10, 1000, 1, 0.1, 1)).toBe((10 * 10000) / (1000 / Math.fround(0.1)));
    expect(netperfServiceDemand(80.24, 1000, 1, 1, 1)).toBe((Math.fround(80.24) * 10000) / 1000);
    expect(netperfServiceDemand(80.24, 1000, 1, 1, 1)).not.toBe((80.24 * 10000) / 1000);
  });
});

describe("link and window", () => {
  test("utilization of the link", () => {
    expect(utilizationPercent(941e6, 1e9)).toBeCloseTo(94.1, 12);
    expect(utilizationPercent(4.1e9, 10e9)).toBeCloseTo(41, 12);
    expect(utilizationPercent(1e9, 0)).toBe(0);
  });

  test("bandwidth-delay product", () => {
    // 10 Gbit/s over 10 ms: 10e9 · 0.01 / 8 = 12.5 MB.
    expect(bdpBytes(10e9, 10_000)).toBe(12_500_000);
    expect(bdpBytes(1e9, 100)).toBe(12_500);
    expect(bdpBytes(1e9, 0)).toBe(0);
  });
  test("sender time shares: a netns run with -w 16K (4.12 s read, busy 3.96 s, rwnd 2.72 s, sndbuf 0.272 s)", () => {
    const s = senderTimeShares(4_124_292, 3_960_000, 2_720_000, 272_000);
    expect(s.busy_percent).toBeCloseTo(96.02, 2);
    expect(s.application_percent).toBeCloseTo(3.98, 2);
    expect(s.rwnd_limited_percent).toBeCloseTo(68.69, 2);
    expect(s.sndbuf_limited_percent).toBeCloseTo(6.87, 2);
    expect(s.network_percent).toBeCloseTo(24.44, 2);
    // busy_time counts whole jiffies: a little over the reads' span is all busy, never over 100 %.
    expect(senderTimeShares(5_000_735, 5_012_000, 0, 0)).toEqual({ busy_percent: 100, application_percent: 0, rwnd_limited_percent: 0, sndbuf_limited_percent: 0, network_percent: 100 });
    expect(senderTimeShares(0, 0, 0, 0).network_percent).toBe(0);
  });
  test("bottleneck, queueing delay, throttled share", () => {
    expect(bottleneckBps(283_558_100, 286_683_738)).toBe(286_683_738);
    expect(bottleneckBps(295_582_016, 277_749_193)).toBe(295_582_016);
    expect(queueingDelayUs(3595, 8)).toBe(3587);
    expect(queueingDelayUs(5, 8)).toBe(0);
    // The draft's example: a 100 ms round trip is 600 RPM; a 4 ms one 15,000.
    expect(roundTripsPerMinute(100_000)).toBe(600);
    expect(roundTripsPerMinute(4_000)).toBe(15_000);
    expect(roundTripsPerMinute(0)).toBe(0);
    expect(addedLatencyUs(212_400, 180)).toBe(212_220);
    expect(addedLatencyUs(150, 180)).toBe(-30);
    // tbf 50mbit holding 490,536 bytes (captured: tests/fixtures/rtnetlink/tbf-50mbit-backlog.hex).
    expect(queueDrainUs(490_536, 50e6)).toBeCloseTo(78_485.76, 2);
    expect(queueDrainUs(1000, 0)).toBe(0);
    expect(throttledPercent(94, 100)).toBe(94);
    expect(throttledPercent(3, 0)).toBe(0);
    // A loopback 1-byte RR: each process at 17.8 % of a core over 14,086.5 transactions/s.
    expect(cpuPerTransactionUs(17.838198406025608, 14086.51397322943)).toBeCloseTo(12.663, 3);
    expect(cpuPerTransactionUs(17.8, 0)).toBe(0);
  });
});

describe("against the peers' printed figures", () => {
  /** Fields of one ntttcp-for-linux console results block. */
  function ntttcpConsole(text: string, title: string) {
    const start = text.indexOf(`=== ${title}`);
    const block = text.slice(start, text.indexOf("\n===", start + 4));
    const field = (label: string) => new RegExp(`INFO: \\t? ?${label}\\t+:([\\d.]+)`).exec(block)![1]!;
    return {
      bytes: Number(field("total bytes")),
      duration: field("test duration"),
      cores: Number(field("cpu cores")),
      mhz: Number(field("cpu speed")),
      idle: field("idle"),
      cycles: field("cycles/byte"),
    };
  }

  /** Totals of an ntttcp-for-linux -x or -j file: MB, realtime, MB/s, mbps, Bps, cycles. */
  function ntttcpOutput(text: string) {
    if (text.includes("<ntttcp")) {
      const last = (re: RegExp) => [...text.matchAll(re)].at(-1)![1]!;
      return {
        mb: last(/<total_bytes metric="MB">([\d.]+)</g),
        realtime: last(/<realtime metric="s">([\d.]+)</g),
        mbs: last(/<throughput metric="MB\/s">([\d.]+)</g),
        mbps: last(/<throughput metric="mbps">([\d.]+)</g),
        bps: last(/<throughput metric="Bps">([\d.]+)</g),
        cycles: last(/<cycles_per_byte metric="cycles\/byte">([\d.]+)</g),
      };
    }
    type Metric = { metric: string; value: string };
    const doc = JSON.parse(text.slice(text.indexOf("{"))) as Record<string, Record<string, Metric & Metric[]>>;
    const r = Object.values(doc)[0]!;
    const tput = (m: string) => r.throughputs!.find((t) => t.metric === m)!.value;
    return { mb: r.totalBytes!.value, realtime: r.realTime!.value, mbs: tput("MB/s"), mbps: tput("mbps"), bps: tput("Bps"), cycles: r.cycles!.value };
  }

  test("ntttcp-for-linux totals: MB, MB/s, mbps, Bps, duration and cycles/byte", () => {
    const consoleText = testdata("ntttcp-linux-console-tcp-sync.txt");
    const runs = [
      ["Run A receiver stdout", "ntttcp-linux-output-verbose-receiver.xml.txt"],
      ["Run A sender stdout", "ntttcp-linux-output-verbose-sender.json.txt"],
      ["Run L1 receiver stdout", "ntttcp-linux-output-default-receiver.json.txt"],
      ["Run L1 sender stdout", "ntttcp-linux-output-default-sender.xml.txt"],
    ] as const;
    for (const [title, file] of runs) {
      const c = ntttcpConsole(consoleText, title);
      const o = ntttcpOutput(testdata(file));
      expect(formatFixed(megabytes(c.bytes), 6)).toBe(o.mb);
      // Bps from the printed realtime: the time is known to ±0.5 µs only, so Bps must fall between its two ends.
      expectWithin(Number(o.bps), bytesPerSecond, c.bytes, plusMinus(Number(o.realtime), 6));
      // Bps is printed with 13+ significant digits, so it pins the measured time far better than realtime's 6 decimals
      // for the other figures.
      const seconds = c.bytes / Number(o.bps);
      expect(formatFixed(seconds, 6)).toBe(o.realtime);
      expect(formatFixed(seconds, 2)).toBe(c.duration);
      expect(formatFixed(megabytesPerSecond(c.bytes, seconds), 3)).toBe(o.mbs);
      expect(formatFixed(megabitsPerSecond(c.bytes, seconds), 3)).toBe(o.mbps);
      // idle % is printed with 2 decimals; the busy fraction is 1 − idle.
      const idle = plusMinus(Number(c.idle), 2);
      const cycles = (idlePercent: number) => cyclesPerByte({ mhz: c.mhz, cores: c.cores, seconds, busyFraction: 1 - idlePercent / 100 }, c.bytes);
      expectPrinted(o.cycles, cycles, [idle]);
      expectPrinted(c.cycles, cycles, [idle]);
    }
  });

  test("ntttcp-for-linux --show-tcp-retrans --show-nic-packets --show-dev-interrupts: rates and packets per interrupt", () => {
    const text = testdata("ntttcp-linux-output-optional-stats.txt");
    const receiver = text.slice(text.indexOf("=== receiver stdout"), text.indexOf("=== sender stdout"));
    const field = (label: string) => new RegExp(`INFO: \\t? ?${label}\\t+:([\\d.]+)`).exec(receiver)![1]!;
    const xml = text.slice(text.indexOf("<ntttcpr"));
    const bytes = Number(field("total bytes"));
    const seconds = bytes / Number(/<throughput metric="Bps">([\d.]+)</.exec(xml)![1]);
    const interrupts = Number(field("total"));
    expect(formatFixed(eventsPerSecond(interrupts, seconds), 3)).toBe(field("interrupts/sec"));
    expect(formatFixed(eventsPerSecond(Number(field("retrans segs")), seconds), 2)).toBe(field("retrans_segments/sec"));
    const packets = Number(field("tx_packets")) + Number(field("rx_packets"));
    expect(formatFixed(packetsPerEvent(packets, interrupts), 2)).toBe(field("pkts/interrupt"));
    expect(formatFixed(packetsPerEvent(packets, interrupts), 3)).toBe(/<avg_packets_per_interrupt metric="packets\/interrupt">([\d.]+)</.exec(xml)![1]!);
  });

  describe("NTttcp for Windows 5.40 (real, under Wine)", () => {
    // ntttcp.exe -r -m 1,*,127.0.0.1 -ns -n 5000 -xml: one thread, 64 KiB buffers, 2 processors.
    const xml = testdata("windows-5.40-count-xml-receiver.xml.txt");
    const total = (name: string, metric?: string) =>
      new RegExp(`^\\t<${name}${metric ? ` metric="${metric}"` : ""}>([-\\d.]+)<`, "m").exec(xml)![1]!;
    const thread = (metric: string) => new RegExp(`^\\t\\t<(?:throughput|avg_bytes_per_compl) metric="${metric}">([-\\d.]+)<`, "m").exec(xml)![1]!;
    // 312.346191 MiB pins the byte count to one integer (±0.52 bytes).
    const bytes = Math.round(Number(total("total_bytes", "MB")) * 1048576);
    const realtime = plusMinus(Number(total("realtime", "s")), 6);
    // Bps's one decimal pins the time far better than realtime's 6, for the figures other than Bps itself.
    const seconds = bytes / Number(total("throughput", "Bps"));
    const bufferLen = Number(total("bufferLen"));

    test("sizes and averages: MB, buffers, Avg B / Compl, Avg Frame Size", () => {
      expect(formatFixed(mebibytes(bytes), 6)).toBe(total("total_bytes", "MB"));
      expect(formatFixed(buffers(bytes, bufferLen), 3)).toBe(total("total_buffers"));
      // 5000 completions: -n 5000 buffers, counted by the receiver as its completed reads.
      expect(formatFixed(bytesPerCompletion(bytes, 5000), 3)).toBe(total("avg_bytes_per_compl", "B"));
      expect(formatFixed(bytesPerCompletion(bytes, 5000), 3)).toBe(thread("B"));
      expect(formatFixed(avgFrameSize(bytes, Number(total("packets_received"))), 3)).toBe(total("avg_frame_size", "B"));
    });

    test("rates: Bps, MB/s, mbps, buffers/s, the thread's KB/s", () => {
      expectWithin(Number(total("throughput", "Bps")), bytesPerSecond, bytes, realtime);
      expectPrinted(total("throughput", "MB/s"), (s) => mebibytesPerSecond(bytes, s), [realtime]);
      expect(formatFixed(megabitsPerSecond(bytes, seconds), 3)).toBe(total("throughput", "mbps"));
      expect(formatFixed(buffersPerSecond(bytes, bufferLen, seconds), 3)).toBe(total("throughput", "buffers/s"));
      expect(formatFixed(kibibytesPerSecond(bytes, seconds), 3)).toBe(thread("KB/s"));
      expect(formatFixed(mebibytesPerSecond(bytes, seconds), 3)).toBe(thread("MB/s"));
    });

    // Wine gives ~MHz as the host's whole MHz (cpuinfo's 2596.096 here).
    const mhz = 2596;
    test("Cycles/Byte from Avg. CPU %, processors and ~MHz, in the -xml file and on the console", () => {
      const cpu = plusMinus(Number(total("cpu", "%")), 3);
      const processors = Number(total("num_processors"));
      expectPrinted(total("cycles", "cycles/byte"), (c) => ntttcpWindowsCyclesPerByte(c, processors, mhz, bytes, seconds), [cpu]);

      // ntttcp.exe -r -m 2,*,127.0.0.1 -ns -t 2: the console's Bytes(MEG) is exact, Buffers/s pins the time.
      const text = testdata("windows-5.40-time-receiver.txt");
      const row = (header: string) => text.split("\n")[text.split("\n").findIndex((l) => l.startsWith(header)) + 2]!.trim().split(/ +/);
      const [megs, , frame, mbs] = row("   Bytes(MEG)");
      const [perSecond, cycles, bufs] = row("Throughput(Buffers/s)");
      const avgCpu = row("Packets Sent").at(-1)!;
      const b = Number(megs) * 1048576;
      const t = buffers(b, 65536) / Number(perSecond);
      expect(formatFixed(buffers(b, 65536), 3)).toBe(bufs!);
      expect(formatFixed(mebibytesPerSecond(b, t), 3)).toBe(mbs!);
      expect(formatFixed(avgFrameSize(b, Number(row("Packets Sent")[1])), 3)).toBe(frame!);
      expectPrinted(cycles!, (c) => ntttcpWindowsCyclesPerByte(c, 2, mhz, b, t), [plusMinus(Number(avgCpu), 3)]);
    });

    test("above 4294 MHz, MHz · 10⁶ wraps in 32 bits as NTttcp's does", () => {
      const at = (m: number) => ntttcpWindowsCyclesPerByte(43.143, 2, m, bytes, seconds);
      // 5000 MHz · 10⁶ = 5e9 wraps to 5e9 − 2³² = 705032704 cycles per second.
      expect(at(5000) / at(mhz)).toBeCloseTo(705032704 / 2596e6, 12);
      expect(at(4294)).toBeGreaterThan(at(mhz));
      expect(at(4295)).toBeLessThan(at(1));
    });
  });

  test("iperf 2 UDP: IPG target of the default 1 Mbit/s at 1470 bytes, the -e server's PPS", () => {
    const text = testdata("iperf2-udp-server-e.txt");
    // -b defaults to 1M, iperf 2's binary mega: 1048576 bits/s.
    const ipg = /IPG target: ([\d.]+) us/.exec(text)![1]!;
    expect(formatFixed(interPacketGapUs(packetsPerSecondAt(1048576, 1470)), 2)).toBe(ipg);
    // "[  1] 0.0000-1.0217 sec ... 91 pps 93/0(0) pkts": 93 datagrams over the interval.
    const line = /\] 0\.0000-([\d.]+) sec .* (\d+) pps (\d+)\/0\(0\) pkts/.exec(text.slice(text.indexOf("### server")))!;
    expectPrinted(line[2]!, (s) => packetsPerSecond(Number(line[3]), s), [plusMinus(Number(line[1]), 4)]);
  });

  test("netperf TCP_RR with -c -C: remote service demand from the results message", () => {
    const text = testdata("netperf-tcp_rr_cpu.txt");
    const results = text.slice(text.indexOf("decoded as results"));
    const hex = /\+ 52 {2}([0-9a-f ]{11}) {2}cpu_util/.exec(results)![1]!.replaceAll(" ", "");
    const dv = new DataView(new ArrayBuffer(4));
    dv.setUint32(0, parseInt(hex, 16));
    const cpuUtil = dv.getFloat32(0);
    const numCpus = Number(/\+ 84 {2}[0-9a-f ]{11} {2}num_cpus +(\d+)/.exec(results)![1]);
    const line = /^16384 +131072 +1 +1 +([\d.]+) +([\d.]+) +([\d.]+) +([\d.]+) +([\d.]+) +([\d.]+)/m.exec(text)!;
    const rate = line[2]!;
    expect(formatFixed(cpuUtil, 2)).toBe(line[4]!); // remote CPU %
    // Trans. Rate is printed with 2 decimals; service demand = f(rate) with units = rate over 1 s.
    expectPrinted(line[6]!, (r) => netperfServiceDemand(cpuUtil, r, 1, 1, numCpus), [plusMinus(Number(rate), 2)]);
  });

  test("netperf UDP_STREAM -m 1: local and remote throughput in 10^6 bits/s", () => {
    const text = testdata("netperf-udp_stream_m1.txt");
    const local = /^\d+ +(\d+) +([\d.]+) +(\d+) +\d+ +([\d.]+)$/m.exec(text)!;
    const remote = /^\d+ {11}([\d.]+) +(\d+) +([\d.]+)$/m.exec(text)!;
    const elapsed = plusMinus(Number(local[2]), 2);
    const sentBytes = Number(local[1]) * Number(local[3]);
    expectPrinted(local[4]!, (e) => netperfThroughput(sentBytes, e, 125000), [elapsed]);
    expectPrinted(remote[3]!, (e) => netperfThroughput(Number(remote[2]), e, 125000), [elapsed]);
  });

  test("iperf3 --json: bits_per_second of the end sums to the last bit, UDP lost_percent", () => {
    type Sum = { bytes: number; seconds: number; bits_per_second: number; lost_packets?: number; packets?: number; lost_percent?: number };
    let checked = 0;
    for (const file of ["iperf3-client-json-tcp.txt", "iperf3-client-json-rev.txt", "iperf3-client-json-udp.txt"]) {
      const text = testdata(file);
      const end = (JSON.parse(text.slice(text.indexOf("\n{") + 1)) as { end: Record<string, Sum> }).end;
      for (const key of ["sum_sent", "sum_received"]) {
        const s = end[key]!;
        expect(throughputBps(s.bytes, s.seconds)).toBe(s.bits_per_second);
        if (s.lost_percent !== undefined) expect(lossPercent(s.lost_packets!, s.packets!)).toBe(s.lost_percent);
        checked++;
      }
    }
    expect(checked).toBe(6);
  });
});

describe("iperf 2 --trip-times figures", () => {
  // A 2.1.8 pair, `iperf -s -e` and `iperf -c -e --trip-times -n 1310720 -l 131072 -b 10M`, the server's line:
  // "[  1] 0.0000-0.9006 sec  1.25 MBytes  11.6 Mbits/sec  1.459/0.232/10.891/3.537 ms (9/145635) 2.07 KByte 998  12=..."
  const bytes = 1310720;
  test("inP: 1310720 bytes over 0.9006 s at a mean of 1.459 ms is 2.07 KByte", () => {
    expect(formatFixed(iperf2InProgressBytes(bytes, 0.9006, 1.459e-3) / 1024, 2)).toBe("2.07");
    expect(iperf2InProgressBytes(bytes, 0, 1e-3)).toBe(0);
  });
  test("NetPwr over the burst latency: 998", () => {
    expect(formatFixed(iperf2NetPower(bytes, 0.9006, 1.459e-3), 0)).toBe("998");
  });
  test("the burst size column is bytes per burst, truncated: 145635", () => {
    expect(Math.trunc(bytesPerCompletion(bytes, 9))).toBe(145635);
  });
  test("stdev: iperf 2's √(M2 / (n − 1)) from n, Σx and Σx²; 0 below two samples", () => {
    // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, M2 = 32, √(32 / 7)
    expect(sampleStdev(8, 40, 232)).toBeCloseTo(Math.sqrt(32 / 7), 12);
    expect(sampleStdev(1, 5, 25)).toBe(0);
    expect(sampleStdev(3, 3e6, 3e12)).toBe(0);
  });
});

describe("iperf 2 NetPwr", () => {
  test("hand-computed: 1 MB/s over 10 µs is 100000; no delay is NaN, no time is 0", () => {
    expect(iperf2NetPower(1e6, 1, 10e-6)).toBeCloseTo(1e5, 6);
    expect(iperf2NetPower(2e6, 2, 4e-6)).toBeCloseTo(250_000, 6);
    expect(iperf2NetPower(1e6, 1, 0)).toBeNaN();
    expect(iperf2NetPower(1e6, 0, 10e-6)).toBe(0);
  });

  test("stock iperf -c -e (tests/fixtures/iperf2/outputs/tcp_e.txt): 50 writes of 128 KiB + the 60-byte header at RTT 55 us", () => {
    // "[  1] 0.0000-1.0000 sec  6.25 MBytes  52.4 Mbits/sec  50/0          0     1151K/55(18) us  119157"
    expect(formatFixed(iperf2NetPower(50 * 131072 + 60, 1, 55e-6), 0)).toBe("119157");
    // "[  1] 1.0000-2.0000 sec  6.25 MBytes  52.4 Mbits/sec  50/0          0     1151K/32(7) us  204800"
    expect(formatFixed(iperf2NetPower(50 * 131072, 1, 32e-6), 0)).toBe("204800");
    // "[  1] 0.0000-2.0279 sec  12.6 MBytes  52.2 Mbits/sec  101/0          0     1151K/33(8) us  197819"
    // The duration is only known to 4 decimals, which moves the figure by ±5 here.
    const [lo, hi] = plusMinus(2.0279, 4).map((s) => iperf2NetPower(101 * 131072 + 60, s, 33e-6));
    expect(197819).toBeWithin(Math.floor(hi!), Math.ceil(lo!) + 1);
  });
});

test("pooledLatency: every transaction weighs the same; tests without samples do not count", () => {
  const p = pooledLatency([
    { sumUs: 1000, count: 100, minUs: 5, maxUs: 40 },
    { sumUs: 3000, count: 100, minUs: 8, maxUs: 90 },
    { sumUs: 0, count: 0, minUs: 0, maxUs: 0 },
  ]);
  expect(p).toEqual({ meanUs: 20, minUs: 5, maxUs: 90 });
  expect(pooledLatency([]).meanUs).toBeNaN();
});

describe("many flows", () => {
  test("memory per flow: RSS growth over the flows; no flows is 0", () => {
    expect(memoryPerFlowBytes(100e6, 340e6, 10_000)).toBe(24_000);
    expect(memoryPerFlowBytes(100e6, 340e6, 0)).toBe(0);
  });
  test("slowest / fastest flow rate: 1 when even, 0 when one flow starved or none moved", () => {
    expect(slowestToFastestRatio([30, 40, 60])).toBe(0.5);
    expect(slowestToFastestRatio([7, 7])).toBe(1);
    expect(slowestToFastestRatio([0, 12])).toBe(0);
    expect(slowestToFastestRatio([0, 0])).toBe(0);
    expect(slowestToFastestRatio([])).toBe(0);
  });
});

describe("repeated runs", () => {
  test("median: odd count the middle, even count the mean of the two middle, unsorted input, none NaN", () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([10, 40, 20, 30])).toBe(25);
    expect(median([7])).toBe(7);
    expect(median([])).toBeNaN();
  });
  test("relative spread = 100 (max - min) / median; 0 over a 0 median", () => {
    expect(relativeSpreadPercent(90, 110, 100)).toBe(20);
    expect(relativeSpreadPercent(1, 3, 2)).toBe(100);
    expect(relativeSpreadPercent(0, 0, 0)).toBe(0);
  });
  test("interim rates counted inside a window: each interval's share of it at its own rate", () => {
    const interims = [
      { rate: 100, seconds: 1, endS: 11 },
      { rate: 200, seconds: 1, endS: 12 },
      { rate: 400, seconds: 0.5, endS: 12.5 },
    ];
    expect(countInWindow(interims, 10.5, 11.5)).toBe(150);
    expect(countInWindow(interims, 10, 20)).toBe(500);
    expect(countInWindow(interims, 12.25, 12.5)).toBe(100);
    expect(countInWindow(interims, 13, 14)).toBe(0);
  });
  test("concurrent instances: the sum of their figures", () => {
    expect(concurrentSum([100, 250.5, 0])).toBe(350.5);
    expect(concurrentSum([])).toBe(0);
  });
  test("change % from A to B; 0 from a 0 baseline", () => {
    expect(changePercent(100, 125)).toBe(25);
    expect(changePercent(200, 150)).toBe(-25);
    expect(changePercent(0, 5)).toBe(0);
  });
});

describe("socket buffers", () => {
  test("Linux reports twice what was set, capped first at the sysctl ceiling", () => {
    expect(linuxSocketBufferBytes(65536, 212992)).toBe(131072);
    expect(linuxSocketBufferBytes(1 << 20, 212992)).toBe(425984);
    expect(linuxSocketBufferBytes(212992, 212992)).toBe(425984);
  });
});

describe("iperf 2 --bounceback round trips (stock 2.1.8 client: `iperf -c H --bounceback=N --bounceback-hold 1 -t 1`)", () => {
  const stats = (ms: number[]) => ms.reduce(runningStatsAdd, NO_SAMPLES);
  test("two round trips, 5.367 and 6.525 ms: printed 2=5.946/5.367/6.525/0.819 ms, 168 rps", () => {
    const s = stats([5.367, 6.525]);
    expect([s.count, s.min, s.max]).toEqual([2, 5.367, 6.525]);
    expect(s.mean.toFixed(3)).toBe("5.946");
    expect(sampleStdev(s.count, s.sum, s.sumSq).toFixed(3)).toBe("0.819");
    expect(bouncebackRps(s.count, s.sum / 1000).toFixed(0)).toBe("168");
  });
  test("a third, 1.189 ms: printed 3=4.360/1.189/6.525/2.807 ms, 229 rps", () => {
    const s = stats([5.367, 6.525, 1.189]);
    expect(s.mean.toFixed(3)).toBe("4.360");
    expect(sampleStdev(s.count, s.sum, s.sumSq).toFixed(3)).toBe("2.807");
    expect(bouncebackRps(s.count, s.sum / 1000).toFixed(0)).toBe("229");
  });
  test("below two samples the deviation is 0; without any the rate is 0", () => {
    expect(sampleStdev(1, 3, 9)).toBe(0);
    expect(bouncebackRps(0, 0)).toBe(0);
  });
});

describe("iperf 2 histogram summary (the stock 2.1.8 --bounceback client's BB8(f)-PDF lines)", () => {
  const bins = (text: string) => new Map(text.split(",").map((p) => p.split(":").map(Number)).map(([bin, n]) => [bin! - 1, n!] as [number, number]));
  const cases: [string, string][] = [
    ["1:17,2:1,4:1,39:1", "1/39/39,Outliers=1"],
    ["1:9,27:1", "1/27/27,Outliers=0"],
    ["1:11,2:7,5:1,13:1", "1/13/13,Outliers=1"],
    ["22:11,23:7,25:1,42:1", "22/42/42,Outliers=0"],
    ["1:3,2:1,106:1", "1/106/106,Outliers=0"],
    ["1:28324,2:39,3:8,4:4,5:2,6:1,8:1,9:1,10:1,15:1,16:1,17:1,22:1,29:1,42:1", "1/1/1,Outliers=0"],
  ];
  for (const [input, printed] of cases) {
    test(`${input} -> ${printed}`, () => {
      const s = iperf2HistogramSummary(bins(input), 100000);
      expect(`${s.lower}/${s.upper}/${s.upper3Stdev},Outliers=${s.outliers}`).toBe(printed);
    });
  }
});

test("secondsUntilStart: 2.1.8's 'Client traffic to start in 2 seconds' for a start 1.64 s ahead", () => {
  expect(secondsUntilStart(1796460862, 1796460860.36)).toBe(2);
  expect(secondsUntilStart(1796460862, 1796460862)).toBe(0);
});

test("connectTimesSummary: 2.1.8's '[ CT] final connect times' (0.014/0.409/1.176/664.341 ms for three connects)", () => {
  const s = connectTimesSummary([0.014, 0.037, 1.176])!;
  expect([s.minMs, s.maxMs]).toEqual([0.014, 1.176]);
  expect(s.avgMs).toBeCloseTo(0.409, 3);
  // The inputs are the printed figures (3 decimals), so the stdev agrees to within their rounding.
  expect(Math.abs(s.stdevPrinted - 664.341)).toBeLessThan(1);
  expect(connectTimesSummary([0.1, 0.2])).toBeNull();
});
