import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { clientJson, nativeServers } from "./harness.ts";
import type { Results } from "../../src/report/result.ts";

const start = nativeServers();
const HAVE_IPV6 = existsSync("/proc/net/if_inet6") && /\blo$/m.test(readFileSync("/proc/net/if_inet6", "utf8"));

/** Both ends' CPU over the window: host busy, per-CPU modes, this process. */
function expectBothCpus(r: Results): void {
  for (const cpu of [r.cpu, r.remote!.cpu]) {
    expect(cpu.busy_percent).toBeGreaterThan(0);
    expect(cpu.process_percent).toBeGreaterThan(0);
    expect(cpu.host?.perCpu?.length).toBeGreaterThan(0);
    expect(cpu.host?.perCpu?.[0]?.softirq).toBeDefined();
  }
}

describe("anyperf client against the native server (loopback)", () => {
  test("TCP: the server's received bytes reconcile with what the client sent; both CPUs reported", async () => {
    await start(31010);
    const r = await clientJson(["-p", "31010", "-t", "1", "-P", "2"]);
    expect(r.remote).toBeDefined();
    expect(r.totals.sent_bytes).toBeGreaterThan(1e6);
    expect(r.remote!.totals.received_bytes).toBe(r.totals.sent_bytes!);
    expect(r.remote!.streams.filter((s) => s.side === "recv")).toHaveLength(2);
    // The receiver reports (as iperf3): the summary is the server's window, ours is `sender`; its cwnd is the
    // sending end's (a receiving socket's is its unused initial window).
    expect(r.summary).toEqual({ ...r.remote!.summary!, cwnd: r.sender!.cwnd });
    expect(r.sender!.bytes).toBeGreaterThan(0);
    expect(Math.abs(r.remote!.summary!.seconds - r.sender!.seconds)).toBeLessThan(0.1);
    // The server's streams add up to its receiver figures; the run ends with a diagnosis.
    expect(r.remote!.streams.reduce((a, s) => a + s.bytes, 0)).toBe(r.remote!.receiver!.bytes);
    expect(r.diagnosis?.verdict).toBeDefined();
    expect(r.diagnosis!.evidence.length).toBeGreaterThan(0);
    expectBothCpus(r);
  });

  test("-n: exactly that many bytes leave the client and land on the server, in the window", async () => {
    await start(31011);
    const r = await clientJson(["-p", "31011", "-n", "20M", "-P", "3"]);
    expect(r.totals.sent_bytes).toBe(20 * 1024 * 1024);
    expect(r.remote!.totals.received_bytes).toBe(20 * 1024 * 1024);
    expect(r.summary.bytes).toBe(20 * 1024 * 1024);
  });

  test("-R: the server sends, the client receives every byte", async () => {
    await start(31012);
    const r = await clientJson(["-p", "31012", "-t", "1", "-R"]);
    expect(r.totals.received_bytes).toBeGreaterThan(1e6);
    expect(r.totals.received_bytes).toBe(r.remote!.totals.sent_bytes!);
    expect(r.remote!.streams.map((s) => s.side)).toEqual(["send"]);
    expectBothCpus(r);
  });

  test("--bidir: both directions reconcile", async () => {
    await start(31013);
    const r = await clientJson(["-p", "31013", "-t", "1", "--bidir"]);
    expect(r.totals.sent_bytes).toBeGreaterThan(1e6);
    expect(r.remote!.totals.received_bytes).toBe(r.totals.sent_bytes!);
    expect(r.totals.received_bytes).toBe(r.remote!.totals.sent_bytes!);
  });

  test("UDP: the server counts what arrived and what was lost by sequence", async () => {
    await start(31014);
    const r = await clientJson(["-p", "31014", "-t", "1", "-u", "-b", "50M"]);
    const sent = r.totals.sent_packets!;
    expect(sent).toBeGreaterThan(3000);
    expect(r.remote!.totals.received_packets! + (r.summary.lost ?? 0)).toBeLessThanOrEqual(sent);
    expect(r.remote!.totals.received_packets).toBeGreaterThan(sent * 0.95);
    expect(r.summary.loss_percent).toBeDefined();
    expect(r.summary.throughput_bps).toBeGreaterThan(40e6);
    expect(r.summary.throughput_bps).toBeLessThan(60e6);
  });

  for (const [flag, port] of [["--rr", 31015], ["--crr", 31016]] as const) {
    test(`${flag}: the server answered the transactions the client timed, over the same window`, async () => {
      await start(port);
      const r = await clientJson(["-p", String(port), "-t", "1", ...(flag === "--rr" ? ["--rr", "1,1"] : ["--crr"])]);
      const ours = r.summary.transactions!;
      const theirs = r.remote!.summary!.transactions!;
      expect(ours).toBeGreaterThan(100);
      expect(Math.abs(ours - theirs) / ours).toBeLessThan(0.05);
      // Whole runs reconcile: the server answered every transaction the client completed, and at most the one
      // the client stopped waiting for besides (its log line prints this count).
      const completed = r.totals.transactions!;
      expect(r.remote!.totals.transactions! - completed).toBeGreaterThanOrEqual(0);
      expect(r.remote!.totals.transactions! - completed).toBeLessThanOrEqual(1);
      expect(r.summary.latency_us?.p99).toBeGreaterThan(0);
      expectBothCpus(r);
    });
  }

  test("six kinds of client at once, one more idle on the control port: all served, none blocks another", async () => {
    await start(31017);
    const idle = await Bun.connect({ hostname: "127.0.0.1", port: 31017, socket: { data() {} } });
    const kinds = [[], ["-R"], ["--bidir"], ["-u", "-b", "20M"], ["--rr", "1,1"], ["--crr"]];
    const all = await Promise.all(kinds.map((k) => clientJson(["-p", "31017", "-t", "2", ...k])));
    idle.end();
    const [tcp, reverse, bidir, udp, rr, crr] = all as [Results, Results, Results, Results, Results, Results];
    expect(tcp.remote!.totals.received_bytes).toBe(tcp.totals.sent_bytes!);
    expect(reverse.totals.received_bytes).toBe(reverse.remote!.totals.sent_bytes!);
    expect(bidir.remote!.totals.received_bytes).toBe(bidir.totals.sent_bytes!);
    expect(bidir.totals.received_bytes).toBe(bidir.remote!.totals.sent_bytes!);
    expect(udp.remote!.totals.received_packets).toBeGreaterThan(udp.totals.sent_packets! * 0.9);
    // Served, not blocked: thousands on a quiet host, 13 seen at load 25 beside five busy clients; a blocked one has none.
    expect(rr.summary.transactions).toBeGreaterThan(5);
    expect(crr.summary.transactions).toBeGreaterThan(5);
  });

  test.skipIf(!HAVE_IPV6)("IPv6 (::1) against a dual-stack server: UDP both ways reconciles", async () => {
    await start(31018, ["--host", "::"]);
    const r = await clientJson(["-p", "31018", "-t", "1", "-u", "-b", "10M", "--bidir"], "::1");
    expect(r.totals.sent_packets).toBeGreaterThan(500);
    expect(r.remote!.totals.received_packets).toBe(r.totals.sent_packets!);
    expect(r.totals.received_packets).toBe(r.remote!.totals.sent_packets!);
  });
});
