import { describe, expect, test } from "bun:test";
import type { HostWindow } from "../host/window.ts";
import { Results } from "../report/result.ts";
import { diagnose } from "./diagnose.ts";
import { diagnosisInput } from "./from-results.ts";

const clientHost: HostWindow = {
  seconds: 10,
  cores: 2,
  perCpu: [
    { cpu: 0, user: 20, system: 30, idle: 50, busy: 50 },
    { cpu: 1, user: 5, softirq: 10, idle: 85, busy: 15 },
  ],
  tcp: { outSegs: 800_000, retransSegs: 12 },
};
const serverHost: HostWindow = {
  seconds: 10,
  cores: 4,
  perCpu: [{ cpu: 3, softirq: 97, system: 2, idle: 1, busy: 99 }],
  tcp: { outSegs: 400_000 },
  process: { total: 3, user: 1, system: 2 },
};

/** A client's Results of a 10 s, 2-stream TCP run at 950 Mbit/s. */
function results(over: Partial<Results> = {}): Results {
  const figures = { bytes: 1_187_500_000, seconds: 10, throughput_bps: 950e6 };
  return Results.parse({
    tool: "anyperf",
    version: "0",
    mode: "client",
    role: "client",
    peer: "10.231.0.2",
    transport: "tcp",
    test: "stream",
    started_at: "2026-12-03T10:00:00Z",
    interrupted: false,
    phases: { warmup_s: 0, measured_s: 10, cooldown_s: 0 },
    summary: figures,
    sender: { ...figures, rtt_us: 850, retransmits: 40 },
    receiver: figures,
    totals: {},
    streams: [
      { ...figures, id: 1, side: "send", connections: 1 },
      { ...figures, id: 1, side: "recv", connections: 1 },
      { ...figures, id: 2, side: "send", connections: 1 },
      { ...figures, id: 2, side: "recv", connections: 1 },
    ],
    intervals: [],
    cpu: { host: clientHost },
    retransmits: 40,
    errors: [],
    ...over,
  });
}

const link = { interface: "apdiag-v1", speed_bps: 1e9, speed_source: "--link-speed" as const, mtu: 1500 };

describe("diagnosisInput", () => {
  test("client sends: the client's host is the sender's", () => {
    const input = diagnosisInput({ local: results(), remoteHost: serverHost, localSends: true, link, windowBytes: 4_194_304 });
    expect(input).toEqual({
      transport: "tcp",
      test: "stream",
      throughput_bps: 950e6,
      streams: 2,
      rtt_us: 850,
      retransmits: 40,
      segments_sent: 800_000,
      link,
      window_bytes: 4_194_304,
      // The senders' own rate (their Results' sender figures), for a -b pace they missed.
      sent_bps: 950e6,
      sender: { cores: 2, perCpu: clientHost.perCpu, tcp: clientHost.tcp },
      receiver: { cores: 4, perCpu: serverHost.perCpu, tcp: serverHost.tcp, process: serverHost.process },
    });
    expect(diagnose(input).verdict).toBe("link");
  });

  test("reverse (-R): the server sends; its saturated core is the receiver's no more", () => {
    const slow = results({ summary: { bytes: 500_000_000, seconds: 10, throughput_bps: 400e6 } });
    const forward = diagnosisInput({ local: slow, remoteHost: serverHost, localSends: true, link });
    const reverse = diagnosisInput({ local: slow, remoteHost: serverHost, localSends: false, link });
    expect(reverse.sender.cores).toBe(4);
    expect(reverse.segments_sent).toBe(400_000);
    expect(diagnose(forward).verdict).toBe("receiver-cpu");
    expect(diagnose(reverse).verdict).toBe("sender-cpu");
    expect(diagnose(reverse).evidence[0]).toBe(
      "sender CPU 3 at 99 % (softirq 97 %) while the link ran at 40 % of its 1.00 Gbit/s: spread interrupts (RSS/RPS, irqbalance) or add streams (-P)",
    );
  });

  test("UDP loss and the -b target carry over; no remote host leaves that end empty", () => {
    const udp = results({ transport: "udp", summary: { bytes: 1, seconds: 10, throughput_bps: 99e6, loss_percent: 0.5 }, retransmits: undefined, sender: undefined });
    const input = diagnosisInput({ local: udp, localSends: true, link, targetBps: 100e6 });
    expect(input.loss_percent).toBe(0.5);
    expect(input.target_bps).toBe(100e6);
    expect(input.receiver).toEqual({});
    expect(input.rtt_us).toBeUndefined();
    expect(diagnose(input).verdict).toBe("unclear");
  });
});

test("the sending end's TCP_INFO path: ours when we send, the server's with -R", () => {
  const ours = { streams: 2, elapsed_us: 2e7, busy_us: 2e7, rwnd_limited_us: 0, sndbuf_limited_us: 0, delivery_bps: 950e6 };
  const theirs = { ...ours, rwnd_limited_us: 1.5e7 };
  const r = results({ tcp_path: ours });
  expect(diagnosisInput({ local: r, remotePath: theirs, localSends: true, link }).path).toEqual(ours);
  expect(diagnosisInput({ local: r, remotePath: theirs, localSends: false, link }).path).toEqual(theirs);
  expect(diagnosisInput({ local: results(), localSends: false, link }).path).toBeUndefined();
});

test("request/response: transactions per second and the client's median transaction time", () => {
  const rr = results({ test: "rr", summary: { bytes: 756_000, seconds: 10, throughput_bps: 604_800, transactions: 378_000, transactions_per_second: 37_800, latency_us: { mean: 26, min: 17, max: 900, p50: 19, p90: 25, p99: 100, p999: 800 } } });
  const input = diagnosisInput({ local: rr, localSends: true, link });
  expect(input.transactions_per_second).toBe(37_800);
  expect(input.latency_p50_us).toBe(19);
  expect(diagnosisInput({ local: results(), localSends: true, link }).transactions_per_second).toBeUndefined();
});
