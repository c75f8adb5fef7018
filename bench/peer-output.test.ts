import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { flentMbits, flentSummary, iperf2CsvTotal, iperf3Received, neperRr, netperfInterims, netperfKeyval, netperfNumber, netperfNumbers, ntttcpReceiverBps, sockperfMessageRate, sockperfPingPong } from "./peer-output.ts";

/** testdata files hold the exact command on their first line and the tool's verbatim output below it. */
function fixture(name: string): string {
  const text = readFileSync(new URL(`./testdata/${name}`, import.meta.url), "utf8");
  return text.slice(text.indexOf("\n") + 1);
}

describe("iperf3Received", () => {
  test("TCP -P 2: the receiver's sum, not the sender's", () => {
    const f = iperf3Received(fixture("iperf3-tcp-p2.json.txt"));
    expect(f.bitsPerSecond).toBeCloseTo(2009693343.5097415, 3);
    expect(f.lostPercent).toBeUndefined();
  });
  test("TCP --bidir -P 2: both directions' receivers, the server's and the client's, added", () => {
    expect(iperf3Received(fixture("iperf3-bidir-p2.json.txt")).bitsPerSecond).toBeCloseTo(9758812253.726187 + 18306672756.64902, 3);
  });
  test("UDP at -b 0: received rate, packets and loss as the server counted them", () => {
    const f = iperf3Received(fixture("iperf3-udp-1400.json.txt"));
    expect(f.bitsPerSecond).toBeCloseTo(295501425.01691926, 3);
    expect(f.packets).toBe(170160);
    expect(f.lostPercent).toBeCloseTo(84.48930418429713, 9);
  });
  test("iperf3's own error becomes the run's error", () => {
    expect(() => iperf3Received(fixture("iperf3-refused.json.txt"))).toThrow("unable to connect to server: Connection refused");
  });
  test("text that is not JSON names what was printed", () => {
    expect(() => iperf3Received("iperf3: error - unable to connect\n")).toThrow("no JSON document: iperf3: error");
  });
});

describe("iperf2CsvTotal", () => {
  test("server -y C with -P 4 and no summary line: the four streams added up", () => {
    const t = iperf2CsvTotal(fixture("iperf2-server-p4.csv.txt"));
    expect(t.streams).toBe(4);
    expect(t.bitsPerSecond).toBe(2129168706 + 1547008622 + 1569752907 + 1602645924);
  });
  test("a summary line (id -1) wins over the sum of streams", () => {
    const text = "x,127.0.0.1,1,127.0.0.1,2,3,0.0-1.0,10,80\nx,127.0.0.1,1,127.0.0.1,2,4,0.0-1.0,10,80\nx,127.0.0.1,0,127.0.0.1,2,-1,0.0-1.0,20,150\n";
    expect(iperf2CsvTotal(text)).toEqual({ bitsPerSecond: 150, streams: 2 });
  });
  test("no report lines is an error", () => {
    expect(() => iperf2CsvTotal("connect failed: Connection refused\n")).toThrow("no CSV report");
  });
});

describe("netperf keyval", () => {
  test("UDP_STREAM -m 1: receiver calls over elapsed time", () => {
    const kv = netperfKeyval(fixture("netperf-udp-stream-m1.keyval.txt"));
    expect(netperfNumber(kv, "REMOTE_RECV_CALLS")).toBe(85526);
    expect(netperfNumber(kv, "ELAPSED_TIME")).toBe(1);
    expect(kv.get("THROUGHPUT_UNITS")).toBe("10^6bits/s");
  });
  test("TCP_RR: transactions per second", () => {
    expect(netperfNumber(netperfKeyval(fixture("netperf-tcp-rr.keyval.txt")), "THROUGHPUT")).toBe(73013.68);
  });
  test("a missing or non-numeric key is an error naming the key", () => {
    const kv = netperfKeyval("THROUGHPUT_UNITS=Trans/s\n");
    expect(() => netperfNumber(kv, "THROUGHPUT")).toThrow("no numeric THROUGHPUT");
    expect(() => netperfNumber(kv, "THROUGHPUT_UNITS")).toThrow("got Trans/s");
  });
});

describe("ntttcpReceiverBps", () => {
  test("total bytes over the test duration of the receiver's totals", () => {
    expect(ntttcpReceiverBps(fixture("ntttcp-receiver.txt"))).toBeCloseTo((13338542080 * 8) / 3, 3);
  });
  test("a receiver that printed no totals is an error", () => {
    expect(() => ntttcpReceiverBps("NTTTCP for Linux 1.4.3\nERROR: cannot bind\n")).toThrow("no totals");
  });
});

describe("neperRr", () => {
  test("aggregate throughput= and latency_p99= (seconds → µs)", () => {
    const f = neperRr(fixture("neper-tcp-rr.txt"));
    expect(f.transactionsPerSecond).toBe(25225.01);
    expect(f.p99Us).toBeCloseTo(4055.03, 6);
  });
  test("output without the p99 line says to ask for it", () => {
    expect(() => neperRr("throughput=5\n")).toThrow("latency_p99");
  });
});

describe("sockperf", () => {
  test("ping-pong: received messages over the valid duration, full-RTT p99", () => {
    const f = sockperfPingPong(fixture("sockperf-ping-pong.txt"));
    expect(f.transactionsPerSecond).toBeCloseTo(9395 / 0.549, 6);
    expect(f.p99Us).toBe(429.598);
  });
  test("throughput: the sender's message rate", () => {
    expect(sockperfMessageRate(fixture("sockperf-throughput.txt"))).toBe(38290);
  });
  test("a refused connection is an error, not a zero", () => {
    expect(() => sockperfPingPong("sockperf: ERROR: Can`t connect socket (errno=111 Connection refused)\n")).toThrow("no valid-duration summary");
    expect(() => sockperfMessageRate("")).toThrow("no message rate");
  });
});

describe("netperfInterims", () => {
  test("-D 1 with -k: each interval's rate, length and end, the final keys left out", () => {
    expect(netperfInterims(fixture("netperf-tcp-rr-interim.txt"))).toEqual([
      { rate: 31933.06, seconds: 1.467, endS: 1796404221.178 },
      { rate: 35535.17, seconds: 0.533, endS: 1796404221.711 },
    ]);
    expect(netperfInterims("THROUGHPUT=5\n")).toEqual([]);
  });
});

describe("netperfNumbers", () => {
  test("one value per -k block, non-numeric values left out", () => {
    expect(netperfNumbers("THROUGHPUT=10.5\nP99_LATENCY=80\nTHROUGHPUT=4\nTHROUGHPUT=n/a\n", "THROUGHPUT")).toEqual([10.5, 4]);
  });
});

describe("flentSummary", () => {
  const series = flentSummary(fixture("flent-rrul-summary.txt"));
  test("every series of RRUL's summary, its mean and data points; N/A columns skipped", () => {
    expect(series.size).toBe(18);
    expect(series.get("TCP download sum")).toEqual({ avg: 12476.8, points: 21 });
    expect(series.get("Ping (ms) avg")).toEqual({ avg: 0.02, points: 21 });
    expect(flentMbits(series, "TCP upload sum")).toBeCloseTo(8967.68e6, 0);
  });
  test("a series flent did not print is an error that names it", () => {
    expect(() => flentMbits(series, "TCP totals sum")).toThrow('flent printed no "TCP totals sum" series');
    expect(() => flentMbits(flentSummary(" TCP upload sum   :      0.00          N/A          N/A Mbits/s           0"), "TCP upload sum")).toThrow("TCP upload sum");
  });
});
