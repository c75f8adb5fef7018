import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { finish, hasStockNetperf, keyvals, oursNetperf, oursNetserver, stockNetperf, stockNetserver, waitListening, type Proc } from "./netperf-harness.ts";
import { freePorts } from "../support/processes.ts";

/**
 * Issue 21 item 10: netperf's per-test metadata as stock prints it: TRANSPORT_MSS from the data socket,
 * DUMP_TCP_INFO on stderr of both netperf and netserver, a netserver that prints nothing while it serves UDP, and
 * the latency of --instances pooled into one line. Ports 34400-34449.
 */

const available = hasStockNetperf();
// Free ports picked at run time: the range is also the kernel's ephemeral one.
const STOCK = freePorts(34400, 34450, 2);
const OURS = STOCK + 1;
const LIMIT_MS = 30_000;

let stockServer: Proc | undefined;
let ourServer: Proc | undefined;

beforeAll(async () => {
  if (!available) return;
  stockServer = stockNetserver(["-D", "-p", String(STOCK)]);
  ourServer = oursNetserver(["-D", "-p", String(OURS)], { DUMP_TCP_INFO: "" });
  await Promise.all([waitListening(STOCK, 10_000), waitListening(OURS, 10_000)]);
});

afterAll(async () => {
  for (const s of [stockServer, ourServer]) s?.kill();
  await Promise.all([stockServer?.done, ourServer?.done]);
});

const DUMP = /^tcpi_rto \d+ tcpi_ato \d+ tcpi_pmtu \d+ tcpi_rcv_ssthresh \d+\ntcpi_rtt \d+ tcpi_rttvar \d+ tcpi_snd_ssthresh \d+ tpci_snd_cwnd \d+\ntcpi_reordering \d+ tcpi_total_retrans \d+\n$/;

describe.skipIf(!available)("TRANSPORT_MSS is the data socket's TCP_MAXSEG, as stock reports it", () => {
  for (const t of ["TCP_STREAM", "TCP_RR", "TCP_MAERTS", "UDP_RR"]) {
    test(t, async () => {
      const argv = ["-H", "127.0.0.1", "-p", String(STOCK), "-l", "1", "-P", "0", "-t", t, "--", "-k", "TRANSPORT_MSS"];
      const stock = await finish(stockNetperf(argv), LIMIT_MS);
      const ours = await finish(oursNetperf(argv), LIMIT_MS);
      expect(ours.code).toBe(0);
      const mss = Number(keyvals(ours.out).TRANSPORT_MSS);
      // Same kernel, same loopback: the same segment size for the same kind of test (-1 for UDP).
      expect(mss).toBe(Number(keyvals(stock.out).TRANSPORT_MSS));
      if (t.startsWith("TCP")) expect(mss).toBeGreaterThan(0);
    });
  }
});

describe.skipIf(!available)("DUMP_TCP_INFO", () => {
  test("anyperf netperf prints the data socket's TCP_INFO on stderr, as stock netperf does", async () => {
    const argv = ["-H", "127.0.0.1", "-p", String(STOCK), "-l", "1", "-P", "0", "-t", "TCP_STREAM", "--", "-k", "THROUGHPUT"];
    const dump = { DUMP_TCP_INFO: "1" };
    const [stock, ours] = await Promise.all([finish(stockNetperf(argv, dump), LIMIT_MS), finish(oursNetperf(argv, dump), LIMIT_MS)]);
    expect(stock.err).toMatch(DUMP);
    expect(ours.code).toBe(0);
    expect(ours.err).toMatch(DUMP);
  });

  test("UDP has no TCP_INFO: nothing on stderr", async () => {
    const ours = await finish(oursNetperf(["-H", "127.0.0.1", "-p", String(STOCK), "-l", "1", "-P", "0", "-t", "UDP_RR"], { DUMP_TCP_INFO: "1" }), LIMIT_MS);
    expect(ours.code).toBe(0);
    expect(ours.err).toBe("");
  });

  test("anyperf netserver started with DUMP_TCP_INFO prints it after a TCP test", async () => {
    const before = ourServer!.text().length;
    const r = await finish(stockNetperf(["-H", "127.0.0.1", "-p", String(OURS), "-l", "1", "-P", "0", "-t", "TCP_STREAM"]), LIMIT_MS);
    expect(r.code).toBe(0);
    await Bun.sleep(200);
    expect(ourServer!.text().slice(before)).toMatch(/tcpi_rto \d+ tcpi_ato \d+ [^\n]*\ntcpi_rtt [^\n]*\ntcpi_reordering \d+ tcpi_total_retrans \d+\n/);
  });
});

describe.skipIf(!available)("anyperf netserver prints nothing while it serves a UDP test", () => {
  test("stock netperf UDP_STREAM -l 3: no sar-style table on the server's stdout", async () => {
    const before = ourServer!.text().length;
    const r = await finish(stockNetperf(["-H", "127.0.0.1", "-p", String(OURS), "-l", "3", "-P", "0", "-t", "UDP_STREAM", "--", "-m", "64"]), LIMIT_MS);
    expect(r.code).toBe(0);
    await Bun.sleep(200);
    expect(ourServer!.text().slice(before)).toBe("");
  });
});

describe.skipIf(!available)("--instances with TCP_RR", () => {
  test("one latency line over every instance's transactions", async () => {
    const r = await finish(oursNetperf(["-H", "127.0.0.1", "-p", String(STOCK), "-l", "1", "-P", "0", "-t", "TCP_RR", "--instances", "4", "--", "-k", "MIN_LATENCY,MAX_LATENCY"]), LIMIT_MS);
    expect(r.code).toBe(0);
    const m = /\nLatency of 4 instances of TCP_RR \(usec\): min (\d+) mean ([\d.]+) p50 (\d+) p90 (\d+) p99 (\d+) max (\d+) stddev ([\d.]+)\n$/.exec(r.out);
    expect(m).not.toBeNull();
    const [min, mean, p50, p90, p99, max] = m!.slice(1, 7).map(Number) as [number, number, number, number, number, number];
    expect(min).toBeLessThanOrEqual(p50);
    expect(p50).toBeLessThanOrEqual(p90);
    expect(p90).toBeLessThanOrEqual(p99);
    expect(p99).toBeLessThanOrEqual(max);
    expect(mean).toBeGreaterThanOrEqual(min);
    // Pooled: the smallest and largest of the instances' own figures.
    const mins = [...r.out.matchAll(/MIN_LATENCY=(\d+)/g)].map((x) => Number(x[1]));
    const maxs = [...r.out.matchAll(/MAX_LATENCY=(\d+)/g)].map((x) => Number(x[1]));
    expect(mins).toHaveLength(4);
    expect(min).toBe(Math.min(...mins));
    expect(max).toBe(Math.max(...maxs));
  });
});

describe.skipIf(!available)("stream tests' latency selectors time each send or recv call, as stock does", () => {
  const cases: [string, string][] = [["TCP_STREAM", "LOCAL_SEND_CALLS"], ["TCP_MAERTS", "LOCAL_RECV_CALLS"], ["UDP_STREAM", "LOCAL_SEND_CALLS"]];
  for (const [t, calls] of cases) {
    test(t, async () => {
      const sel = `MIN_LATENCY,P50_LATENCY,P90_LATENCY,P99_LATENCY,MAX_LATENCY,MEAN_LATENCY,STDDEV_LATENCY,ELAPSED_TIME,${calls}`;
      const argv = ["-H", "127.0.0.1", "-p", String(STOCK), "-l", "1", "-P", "0", "-t", t, "--", "-k", sel];
      const stock = keyvals((await finish(stockNetperf(argv), LIMIT_MS)).out);
      const r = await finish(oursNetperf(argv), LIMIT_MS);
      expect(r.code).toBe(0);
      const k = keyvals(r.out);
      expect(Number(stock.P50_LATENCY)).toBeGreaterThanOrEqual(0);
      const [min, p50, p90, p99, max] = ["MIN", "P50", "P90", "P99", "MAX"].map((n) => Number(k[`${n}_LATENCY`]));
      expect(min).toBeGreaterThanOrEqual(0);
      expect(min!).toBeLessThanOrEqual(p50!);
      expect(p50!).toBeLessThanOrEqual(p90!);
      expect(p90!).toBeLessThanOrEqual(p99!);
      expect(p99!).toBeLessThanOrEqual(max!);
      expect(Number(k.STDDEV_LATENCY)).toBeGreaterThanOrEqual(0);
      // The calls run back to back: their times add up to most of the test, never more.
      const busyS = (Number(k.MEAN_LATENCY) * Number(k[calls])) / 1e6;
      expect(busyS).toBeGreaterThan(0.3 * Number(k.ELAPSED_TIME));
      expect(busyS).toBeLessThan(1.1 * Number(k.ELAPSED_TIME));
    });
  }
});
