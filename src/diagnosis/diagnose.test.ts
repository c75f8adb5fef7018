import { describe, expect, test } from "bun:test";
import { busiestCore, diagnose } from "./diagnose.ts";
import { Diagnosis, type DiagnosisInput, type EndHost, type TcpPath } from "./schema.ts";
import * as limits from "./thresholds.ts";

/** A host of `cores` cores, all at 10 % busy, except the given ones. */
function host(cores: number, busy: Record<number, Partial<Record<"user" | "system" | "softirq" | "irq" | "steal", number>>> = {}): EndHost {
  const perCpu = Array.from({ length: cores }, (_, cpu) => {
    const modes = busy[cpu] ?? { user: 5, system: 5 };
    const used = Object.values(modes).reduce((a, b) => a + b, 0);
    return { cpu, ...modes, idle: 100 - used, busy: used };
  });
  return { cores, perCpu };
}

const G = 1e9;
const idle = host(4);

function input(over: Partial<DiagnosisInput> = {}): DiagnosisInput {
  return {
    transport: "tcp",
    test: "stream",
    throughput_bps: 4.1 * G,
    streams: 1,
    rtt_us: 100,
    retransmits: 0,
    segments_sent: 1_000_000,
    link: { interface: "eth0", speed_bps: 10 * G, speed_source: "sysfs", mtu: 1500 },
    window_bytes: 4 * 1024 * 1024,
    sender: idle,
    receiver: idle,
    ...over,
  };
}

function run(over: Partial<DiagnosisInput>): Diagnosis {
  // Every answer must be a valid document.
  return Diagnosis.parse(diagnose(input(over)));
}

describe("busiest core", () => {
  test("highest busy wins; its largest mode is named", () => {
    expect(busiestCore(host(4, { 2: { softirq: 80, system: 19 }, 3: { user: 60 } }))).toEqual({ cpu: 2, busy_percent: 99, mode: "softirq", mode_percent: 80 });
    expect(busiestCore({})).toBeUndefined();
  });
});

describe("verdicts", () => {
  test("link: goodput at the link speed", () => {
    const d = run({ throughput_bps: 9.41 * G });
    expect(d.verdict).toBe("link");
    expect(d.link_utilization_percent).toBeCloseTo(94.1, 9);
    expect(d.evidence).toEqual(["9.41 Gbit/s is 94 % of the link's 10.0 Gbit/s (eth0, from sysfs): the link is the limit"]);
  });

  test("link: a shaped veth named by --link-speed, with a busy core noted", () => {
    const d = run({
      throughput_bps: 0.953 * G,
      link: { interface: "apdiag-v1", speed_bps: G, speed_source: "--link-speed", mtu: 1500 },
      sender: host(2, { 0: { softirq: 60, system: 35 } }),
    });
    expect(d.verdict).toBe("link");
    expect(d.evidence).toEqual([
      "953 Mbit/s is 95 % of the link's 1.00 Gbit/s (apdiag-v1, from --link-speed): the link is the limit",
      "sender CPU 0 at 95 % (softirq 60 %) too: near its limit as well",
    ]);
  });

  test("receiver-cpu: one core in softirq, the link at 41 %", () => {
    const d = run({ receiver: host(4, { 1: { softirq: 90, system: 9 } }) });
    expect(d.verdict).toBe("receiver-cpu");
    expect(d.busiest_cpu.receiver).toEqual({ cpu: 1, busy_percent: 99, mode: "softirq", mode_percent: 90 });
    expect(d.evidence).toEqual([
      "receiver CPU 1 at 99 % (softirq 90 %) while the link ran at 41 % of its 10.0 Gbit/s: spread interrupts (RSS/RPS, irqbalance) or add streams (-P)",
    ]);
  });

  test("sender-cpu: user time, and the threads check: -P only while streams < cores", () => {
    const sender = host(2, { 0: { user: 97 } });
    expect(run({ sender }).verdict).toBe("sender-cpu");
    expect(run({ sender }).evidence[0]).toEndWith(": add streams (-P) to use more cores");
    expect(run({ sender, streams: 2 }).evidence[0]).toEndWith(": already 2 streams on 2 cores: this end needs faster cores");
    expect(run({ sender: host(2, { 0: { system: 95 } }), streams: 4 }).evidence[0]).toEndWith(": send larger buffers (-l) for fewer system calls");
    expect(run({ sender: host(2, { 0: { steal: 95 } }) }).evidence[0]).toEndWith(": the hypervisor takes this core (steal): a larger VM or dedicated cores");
  });

  test("a core held by another program is not anyperf's limit: said beside the verdict", () => {
    const receiver = { ...host(2, { 0: { user: 64, system: 36 } }), process: { total: 6.3, user: 2, system: 4.3 } };
    const d = run({ receiver });
    expect(d.verdict).toBe("unclear");
    expect(d.evidence).toEqual([
      "no limit found: the link ran at 41 % of its 10.0 Gbit/s, busiest receiver CPU 0 at 100 % (user 64 %), window not reached",
      "receiver CPU 0 at 100 % (user 64 %) is held by another program (anyperf used 6.3 % of a core there): it may have slowed the run; test where cores are free",
    ]);
    // anyperf's own threads could have spent it (100 − 50.1 < 50), or it is the traffic's softirq: the usual verdict.
    expect(run({ receiver: { ...receiver, process: { total: 50.1, user: 40, system: 10.1 } } }).evidence[0]).toEndWith(": add streams (-P) to use more cores");
    expect(run({ receiver: { ...receiver, process: { total: 50, user: 40, system: 10 } } }).verdict).toBe("unclear");
    const softirq = { ...host(2, { 0: { softirq: 95 } }), process: { total: 1, user: 0.5, system: 0.5 } };
    expect(run({ receiver: softirq }).evidence[0]).toEndWith(": spread interrupts (RSS/RPS, irqbalance) or add streams (-P)");
  });

  test("over loopback both ends are one host: both processes count as anyperf's", () => {
    const receiver = { ...host(2, { 0: { user: 60, system: 35 } }), process: { total: 30, user: 20, system: 10 } };
    const sender = { ...host(2), process: { total: 20, user: 15, system: 5 } };
    const lo = { interface: "lo", note: "loopback: no link speed" };
    expect(run({ receiver, sender, link: lo }).evidence[0]).toEndWith(": add streams (-P) to use more cores");
    expect(run({ receiver, sender }).verdict).toBe("unclear");
  });

  test("both ends saturated: the busier one is named", () => {
    expect(run({ sender: host(2, { 0: { user: 91 } }), receiver: host(2, { 1: { softirq: 96 } }) }).verdict).toBe("receiver-cpu");
    expect(run({ sender: host(2, { 0: { user: 99 } }), receiver: host(2, { 1: { softirq: 96 } }) }).verdict).toBe("sender-cpu");
  });

  test("window: BDP above the socket buffer, the window reached", () => {
    // 10 Gbit/s × 10 ms = 12.5 MB to fill the link; 4 MiB in flight at most: 4 MiB / 10 ms = 3.36 Gbit/s.
    const d = run({ throughput_bps: 3.3 * G, rtt_us: 10_000 });
    expect(d.verdict).toBe("window");
    expect(d.bdp_bytes).toBe(12_500_000);
    expect(d.window_bytes).toBe(4 * 1024 * 1024);
    expect(d.evidence).toEqual(["BDP 11.9 MiB (10.0 Gbit/s × 10.0 ms RTT) > socket buffer 4.00 MiB: raise the window (-w, net.ipv4.tcp_rmem/tcp_wmem) or add streams (-P)"]);
    expect(run({ throughput_bps: 6.6 * G, rtt_us: 10_000, streams: 2 }).evidence[0]).toStartWith("BDP 11.9 MiB (10.0 Gbit/s × 10.0 ms RTT) > 2 × socket buffer 4.00 MiB");
  });

  test("window before CPU: a full window with a busy core is the window", () => {
    expect(run({ throughput_bps: 3.3 * G, rtt_us: 10_000, receiver: host(4, { 0: { softirq: 95 } }) }).verdict).toBe("window");
  });

  test("window without a link speed: in flight at the buffer", () => {
    const d = run({ throughput_bps: 3.3 * G, rtt_us: 10_000, link: { interface: "apdiag-v1", note: "apdiag-v1 is virtual: pass --link-speed" } });
    expect(d.verdict).toBe("window");
    expect(d.evidence).toEqual([
      "in flight 3.93 MiB (3.30 Gbit/s × 10.0 ms RTT) reaches socket buffer 4.00 MiB: raise the window (-w, net.ipv4.tcp_rmem/tcp_wmem) or add streams (-P)",
      "link speed unknown: apdiag-v1 is virtual: pass --link-speed",
    ]);
  });

  test("loss: UDP datagrams and TCP retransmits", () => {
    const udp = run({ transport: "udp", loss_percent: 3.2, window_bytes: undefined });
    expect(udp.verdict).toBe("loss");
    expect(udp.loss_percent).toBe(3.2);
    expect(udp.evidence[0]).toBe("3.2 % of datagrams lost with no core saturated while the link ran at 41 % of its 10.0 Gbit/s: lower -b, or find the drop (receive buffer -w, NIC rx_drop)");
    const tcp = run({ retransmits: 21_000 });
    expect(tcp.verdict).toBe("loss");
    expect(tcp.loss_percent).toBeCloseTo(2.1, 12);
    expect(tcp.evidence[0]).toStartWith("2.1 % of segments retransmitted");
  });

  test("CPU before loss: a saturated receiver drops datagrams itself", () => {
    expect(run({ transport: "udp", loss_percent: 30, receiver: host(2, { 1: { softirq: 99 } }) }).verdict).toBe("receiver-cpu");
  });

  test("unclear: nothing at its limit", () => {
    const d = run({});
    expect(d.verdict).toBe("unclear");
    expect(d.evidence).toEqual(["no limit found: the link ran at 41 % of its 10.0 Gbit/s, busiest receiver CPU 0 at 10 % (user 5.0 %), window not reached"]);
  });

  test("unclear: link speed unknown says why, and what to pass", () => {
    const d = run({ link: { interface: "lo", note: "loopback: no link speed" }, window_bytes: undefined, sender: {}, receiver: {} });
    expect(d.verdict).toBe("unclear");
    expect(d.link_bps).toBeUndefined();
    expect(d.evidence).toEqual([
      "no limit found: the link ran 4.10 Gbit/s (its speed unknown), no per-core CPU figures, window unknown",
      "link speed unknown: loopback: no link speed",
    ]);
  });

  test("unclear: a UDP sender paced at its -b target, however busy a core looked", () => {
    const d = run({ transport: "udp", throughput_bps: 99e6, target_bps: 100e6, loss_percent: 0, receiver: host(2, { 0: { user: 99 } }) });
    expect(d.verdict).toBe("unclear");
    expect(d.evidence[0]).toBe("ran at its -b target 100 Mbit/s while the link ran at 0.99 % of its 10.0 Gbit/s: raise -b to find the limit");
    expect(run({ transport: "udp", throughput_bps: 94e6, target_bps: 100e6, receiver: host(2, { 0: { user: 99 } }) }).verdict).toBe("receiver-cpu");
  });

  test("a sender that missed its -b pace is said so, whatever the verdict (issue 29: -u -b 1G ran 672 Mbit/s unsaid)", () => {
    const d = run({ transport: "udp", throughput_bps: 600e6, sent_bps: 672e6, target_bps: G, loss_percent: 10.7, sender: host(2, { 0: { user: 99 } }) });
    expect(d.verdict).toBe("sender-cpu");
    expect(d.evidence[1]).toBe("the sender missed its -b pace: sent 672 Mbit/s, 67 % of 1.00 Gbit/s");
    // Within TARGET_REACHED_PERCENT of its pace, or without -b, nothing is said of it.
    const kept = run({ transport: "udp", throughput_bps: 600e6, sent_bps: (limits.TARGET_REACHED_PERCENT / 100) * G, target_bps: G, loss_percent: 10.7, sender: host(2, { 0: { user: 99 } }) });
    expect(kept.evidence.join("\n")).not.toContain("-b pace");
    expect(run({ transport: "udp", throughput_bps: 600e6, sent_bps: 672e6, loss_percent: 10.7 }).evidence.join("\n")).not.toContain("-b pace");
  });

  test("request/response is never a link or window verdict", () => {
    const d = run({ test: "rr", throughput_bps: 9.9 * G, rtt_us: 10_000 });
    expect(d.verdict).toBe("unclear");
    expect(d.evidence[0]).toStartWith("request/response: each transaction waits a round trip");
    const crr = run({ test: "crr", sender: host(2, { 1: { system: 93 } }), link: { interface: "lo", note: "loopback: no link speed" } });
    expect(crr.verdict).toBe("sender-cpu");
    // Its sizes are --rr's, and its bits/s say nothing of a link: neither is in the evidence.
    expect(crr.evidence).toEqual(["sender CPU 1 at 93 % (system 93 %): add streams (-P) to use more cores"]);
  });
});

describe("boundaries", () => {
  const G10 = 10 * G;
  test("link: at the threshold is full, just below is not", () => {
    expect(run({ throughput_bps: (limits.LINK_FULL_PERCENT / 100) * G10 }).verdict).toBe("link");
    expect(run({ throughput_bps: (limits.LINK_FULL_PERCENT / 100) * G10 - 1 }).verdict).toBe("unclear");
  });

  test("core: at the threshold is saturated, just below is not", () => {
    expect(run({ receiver: host(2, { 0: { softirq: limits.CORE_SATURATED_PERCENT } }) }).verdict).toBe("receiver-cpu");
    expect(run({ receiver: host(2, { 0: { softirq: limits.CORE_SATURATED_PERCENT - 0.01 } }) }).verdict).toBe("unclear");
  });

  test("window: in flight at the reached fraction, and the BDP must exceed the buffers", () => {
    const window = 4 * 1024 * 1024;
    const rtt_us = 10_000;
    const reached = (limits.WINDOW_REACHED_FRACTION * window * 8) / (rtt_us / 1e6);
    expect(run({ throughput_bps: reached, rtt_us }).verdict).toBe("window");
    expect(run({ throughput_bps: reached * 0.999, rtt_us }).verdict).toBe("unclear");
    // A link whose BDP fits in the buffer is not window-bound, whatever is in flight: 1 Gbit/s × 10 ms = 1.25 MB.
    expect(run({ throughput_bps: 0.8 * G, rtt_us, window_bytes: 1_250_000, link: { speed_bps: G, speed_source: "sysfs" } }).verdict).toBe("unclear");
    expect(run({ throughput_bps: 0.8 * G, rtt_us, window_bytes: 1_249_999, link: { speed_bps: G, speed_source: "sysfs" } }).verdict).toBe("window");
  });

  test("-b target: at the reached share the pace held, just below it a busy core is the limit", () => {
    const busy = host(2, { 0: { user: 99 } });
    expect(run({ throughput_bps: (limits.TARGET_REACHED_PERCENT / 100) * 1e8, target_bps: 1e8, receiver: busy }).verdict).toBe("unclear");
    expect(run({ throughput_bps: (limits.TARGET_REACHED_PERCENT / 100) * 1e8 - 1, target_bps: 1e8, receiver: busy }).verdict).toBe("receiver-cpu");
  });

  test("loss: at the thresholds", () => {
    expect(run({ transport: "udp", loss_percent: limits.UDP_LOSS_HIGH_PERCENT }).verdict).toBe("loss");
    expect(run({ transport: "udp", loss_percent: limits.UDP_LOSS_HIGH_PERCENT - 0.01 }).verdict).toBe("unclear");
    expect(run({ retransmits: limits.RETRANSMIT_HIGH_PERCENT * 10_000 }).verdict).toBe("loss");
    expect(run({ retransmits: limits.RETRANSMIT_HIGH_PERCENT * 10_000 - 1 }).verdict).toBe("unclear");
    expect(run({ retransmits: 50, segments_sent: undefined }).loss_percent).toBeUndefined();
  });
});

describe("from the sending sockets (TCP_INFO chrono stats, delivery rate, RTTs)", () => {
  const veth = { interface: "veth-a", mtu: 1500, note: "veth-a is virtual (reports a nominal 10000 Mb/s): pass --link-speed" };
  /** A 5 s window of one sender: busy, rwnd and sndbuf in seconds. */
  function path(busy: number, rwnd = 0, sndbuf = 0, over: Partial<TcpPath> = {}): TcpPath {
    return { streams: 1, elapsed_us: 5e6, busy_us: busy * 1e6, rwnd_limited_us: rwnd * 1e6, sndbuf_limited_us: sndbuf * 1e6, delivery_bps: 283.6e6, delivery_app_limited: false, srtt_us: 3595, min_rtt_us: 8, ...over };
  }
  const shaped = (over: Partial<DiagnosisInput>) => run({ throughput_bps: 286.7e6, link: veth, ...over });

  test("link without a link speed: busy, network-limited, goodput at the delivery rate", () => {
    const d = shaped({ path: path(5) });
    expect(d.verdict).toBe("link");
    expect(d.bottleneck_bps).toBe(286.7e6);
    expect(d.queueing_delay_us).toBe(3587);
    expect(d.sender_time).toEqual({ busy_percent: 100, application_percent: 0, rwnd_limited_percent: 0, sndbuf_limited_percent: 0, network_percent: 100 });
    expect(d.evidence).toEqual([
      "sender busy 100 % of the window: receive window 0 %, send buffer 0 %, network 100 % of it: the path is the limit at 287 Mbit/s (delivery rate 284 Mbit/s, goodput 287 Mbit/s)",
      "queueing delay 3.59 ms: smoothed RTT 3.60 ms over the path's min RTT 8 µs",
    ]);
  });

  test("a shaper read from the kernel is the link's speed, and named", () => {
    const tbf = { interface: "veth-a", mtu: 1500, speed_bps: 300e6, speed_source: "qdisc" as const, shaper: { kind: "tbf", rate_bps: 300e6 } };
    const d = shaped({ link: tbf, path: path(5) });
    expect(d.verdict).toBe("link");
    expect(d.link_bps).toBe(300e6);
    expect(d.bottleneck_bps).toBe(286.7e6);
    expect(d.evidence[0]).toBe("287 Mbit/s is 96 % of the link's 300 Mbit/s (veth-a, from its tbf qdisc): the link is the limit");
    // Below the link threshold of the shaper's rate, the sockets still name the path, and the shaper beside it.
    const slower = shaped({ throughput_bps: 250e6, link: tbf, path: path(5, 0, 0, { delivery_bps: 260e6 }) });
    expect(slower.verdict).toBe("link");
    expect(slower.evidence[0]).toEndWith("the path is the limit at 260 Mbit/s (delivery rate 260 Mbit/s, goodput 250 Mbit/s, veth-a shaped by tbf to 300 Mbit/s)");
  });

  test("a core held by another program does not make a network-limited sender's receiver the limit", () => {
    const receiver = { ...host(2, { 0: { user: 64, system: 36 } }), process: { total: 3, user: 1, system: 2 } };
    expect(run({ receiver, link: veth }).verdict).toBe("unclear");
    const d = shaped({ receiver, path: path(5) });
    expect(d.verdict).toBe("link");
    expect(d.evidence[2]).toBe("receiver CPU 0 at 100 % (user 64 %) is held by another program (anyperf used 3.0 % of a core there): it may have slowed the run; test where cores are free");
  });

  test("network-limited below the delivery rate: the facts disagree, and say which", () => {
    const d = shaped({ throughput_bps: 150e6, path: path(5, 0, 0, { delivery_bps: 290e6 }) });
    expect(d.verdict).toBe("unclear");
    expect(d.evidence[0]).toEndWith("yet the goodput 150 Mbit/s is only 52 % of the 290 Mbit/s the path delivered: the facts disagree");
    expect(shaped({ throughput_bps: 0.8 * 290e6, path: path(5, 0, 0, { delivery_bps: 290e6 }) }).verdict).toBe("link");
    expect(shaped({ path: path(5, 0, 0, { delivery_bps: undefined }) }).evidence[0]).toEndWith("no delivery rate was read to say at what rate: the facts are incomplete");
  });

  test("over loopback a network-limited sender is no link: the CPU figures decide", () => {
    const lo = { interface: "lo", note: "loopback: no link speed" };
    const d = run({ throughput_bps: 18.6 * G, link: lo, path: path(4.3, 0.04, 0.09, { delivery_bps: 20.7 * G }) });
    expect(d.verdict).toBe("unclear");
    expect(d.bottleneck_bps).toBe(20.7 * G);
    expect(run({ link: lo, path: path(5), sender: host(2, { 0: { user: 97 } }) }).verdict).toBe("sender-cpu");
  });

  test("network-limited with retransmits: loss", () => {
    expect(shaped({ path: path(5), retransmits: 20_000 }).verdict).toBe("loss");
  });

  test("receive window: window, or the receiver's CPU when a receiver core is saturated", () => {
    const d = shaped({ path: path(4.95, 3, 0.5), window_bytes: 16384, rtt_us: 780 });
    expect(d.verdict).toBe("window");
    expect(d.evidence).toEqual([
      "sender busy 99 % of the window: receive window 61 %, send buffer 10 %, network 29 % of it: the receive window held it: raise the window (-w, net.ipv4.tcp_rmem/tcp_wmem) or add streams (-P)",
      "socket buffer 16.0 KiB, in flight 27.3 KiB (287 Mbit/s × 780 µs RTT)",
    ]);
    const busy = shaped({ path: path(5, 4), receiver: host(2, { 1: { user: 70, system: 25 } }) });
    expect(busy.verdict).toBe("receiver-cpu");
    expect(busy.evidence[0]).toStartWith("receiver CPU 1 at 95 % (user 70 %) (sender busy 100 % of the window: receive window 80 %");
    // The same busy receiver behind a full small window: the window.
    expect(shaped({ path: path(5, 4), receiver: host(2, { 1: { user: 70, system: 25 } }), window_bytes: 16384, rtt_us: 780 }).verdict).toBe("window");
    // Held below its buffer with no receiver core saturated: still the window, saying what did not fit.
    expect(shaped({ path: path(5, 4) }).evidence[0]).toContain("the receive window held it below its buffer, yet no receiver core was saturated (busiest receiver CPU 0 at 10 % (user 5.0 %)) nor its CPU quota throttled");
  });

  test("a socket buffer wholly in flight is the window, though the kernel counts its time as network", () => {
    // Measured on an unshaped veth with -w 4K: 25 % rwnd-limited, 75 % network, 770 Mbit/s × 107 µs = 10 KB in flight.
    const d = run({ throughput_bps: 770e6, link: veth, window_bytes: 4096, rtt_us: 107, path: path(4.95, 1.24, 0, { delivery_bps: 770e6 }) });
    expect(d.verdict).toBe("window");
    expect(d.evidence).toEqual([
      "sender busy 99 % of the window: receive window 25 %, send buffer 0 %, network 75 % of it: its socket buffer was in flight all along (the kernel counts that as network time): raise the window (-w, net.ipv4.tcp_rmem/tcp_wmem) or add streams (-P)",
      "socket buffer 4.00 KiB, in flight 10.1 KiB (770 Mbit/s × 107 µs RTT)",
    ]);
    // The same shares with the buffer not reached (in flight below half of it): the path, not the window.
    expect(run({ throughput_bps: 770e6, link: veth, window_bytes: 64 * 1024, rtt_us: 107, path: path(4.95, 1.24, 0, { delivery_bps: 770e6 }) }).verdict).toBe("link");
  });

  test("send buffer: window", () => {
    expect(shaped({ path: path(5, 0.5, 3) }).evidence[0]).toEndWith("its own send buffer held it: raise the window (-w, net.ipv4.tcp_rmem/tcp_wmem) or add streams (-P)");
  });

  test("a sender that left its socket idle: its CPU, or the facts disagree", () => {
    expect(shaped({ path: path(2), sender: host(2, { 0: { user: 97 } }) }).verdict).toBe("sender-cpu");
    const d = shaped({ path: path(2) });
    expect(d.verdict).toBe("unclear");
    expect(d.evidence[0]).toBe("sender busy 40 % of the window: receive window 0 %, send buffer 0 %, network 100 % of it: the sender's application left its socket idle 60 % of the window, yet no sender core was saturated (busiest sender CPU 0 at 10 % (user 5.0 %)) nor its CPU quota throttled: the facts disagree");
  });

  test("both windows together hold the majority: window", () => {
    expect(shaped({ path: path(5, 2, 1) }).verdict).toBe("window");
  });

  test("-b below the path: nothing limited, the sender's pace named", () => {
    const d = shaped({ throughput_bps: 100.5e6, target_bps: 100e6, path: path(1.35, 0, 0, { delivery_bps: 190e6 }) });
    expect(d.verdict).toBe("unclear");
    expect(d.evidence[0]).toBe("nothing limited: the sender kept its -b pace 100 Mbit/s (its socket idle 73 % of the window, waiting on its pace); the path carried 190 Mbit/s: raise -b to find the limit");
    expect(shaped({ throughput_bps: 100.5e6, target_bps: 100e6, path: path(1.35, 0, 0, { delivery_bps: 100e6, delivery_app_limited: true }) }).evidence[0]).toContain("the path carried at least 100 Mbit/s");
  });

  test("a known link speed still wins, unless the windows held the sender; UDP and RR ignore the path", () => {
    expect(run({ throughput_bps: 9.41 * G, path: path(2) }).verdict).toBe("link");
    expect(run({ throughput_bps: 9.41 * G, path: path(5, 3) }).verdict).toBe("window");
    expect(run({ transport: "udp", path: path(5), window_bytes: undefined }).sender_time).toBeUndefined();
    expect(run({ test: "rr", path: path(5) }).bottleneck_bps).toBeUndefined();
  });
});

describe("path thresholds", () => {
  const p = (busy: number, rwnd = 0): TcpPath => ({ streams: 1, elapsed_us: 100, busy_us: busy, rwnd_limited_us: rwnd, sndbuf_limited_us: 0, delivery_bps: 1e8 });
  const on = (path: TcpPath, throughput_bps = 1e8) => run({ throughput_bps, path, link: { interface: "veth-a" } }).verdict;
  test("busy at the threshold keeps the path supplied, just below the application held it", () => {
    expect(on(p(limits.SENDER_BUSY_PERCENT))).toBe("link");
    expect(on(p(limits.SENDER_BUSY_PERCENT - 0.01))).toBe("unclear");
  });
  test("a limit's share at the threshold names it", () => {
    expect(on(p(100, limits.LIMIT_SHARE_PERCENT))).toBe("window");
    expect(on(p(100, limits.LIMIT_SHARE_PERCENT - 0.01))).toBe("link");
  });
  test("goodput at the full share of the delivery rate is the link, just below it the facts disagree", () => {
    expect(on(p(100), limits.PATH_FULL_PERCENT * 1e6)).toBe("link");
    expect(on(p(100), limits.PATH_FULL_PERCENT * 1e6 - 1)).toBe("unclear");
  });
});

describe("a cgroup's CPU quota", () => {
  const veth = { interface: "veth-b", mtu: 1500 };
  const quota = (throttled: number, periods = 100) => ({ periods, throttled, throttled_us: throttled * 95_000, quota_cores: 0.05 });
  const network: TcpPath = { streams: 1, elapsed_us: 4e6, busy_us: 3.64e6, rwnd_limited_us: 0.07e6, sndbuf_limited_us: 0.07e6, delivery_bps: 367e6, srtt_us: 7382, min_rtt_us: 1 };

  test("a throttled receiver behind a sender that looks network-limited: receiver-cpu, saying throttled", () => {
    const d = run({ throughput_bps: 1.11 * G, link: veth, path: network, receiver: { ...idle, cgroup: quota(95) } });
    expect(d.verdict).toBe("receiver-cpu");
    expect(d.evidence).toEqual([
      "receiver throttled by its cgroup's CPU quota in 95 % of periods (9.0 s throttled, quota 0.05 of a core): raise the pod's CPU limit (cpu.max, cpu.cfs_quota_us)",
      "sender busy 91 % of the window: receive window 2 %, send buffer 2 %, network 96 % of it",
    ]);
  });

  test("the kernel's throttling count comes before a sender that left its socket idle on a busy core", () => {
    const busySender = { ...host(2, { 0: { user: 70, system: 30 } }), process: { total: 4.5, user: 2, system: 2.5 } };
    const d = run({ link: veth, path: { ...network, busy_us: 3.08e6 }, sender: busySender, receiver: { ...idle, cgroup: quota(95) } });
    expect(d.verdict).toBe("receiver-cpu");
    expect(d.evidence[0]).toStartWith("receiver throttled by its cgroup's CPU quota in 95 % of periods");
  });

  test("a throttled sender that left its socket idle: sender-cpu; without socket facts the quota comes before a busy core", () => {
    expect(run({ link: veth, path: { ...network, busy_us: 1e6 }, sender: { ...idle, cgroup: quota(60) } }).verdict).toBe("sender-cpu");
    const d = run({ sender: { ...idle, cgroup: quota(60) }, receiver: host(2, { 1: { softirq: 99 } }) });
    expect(d.verdict).toBe("sender-cpu");
    expect(d.evidence[0]).toStartWith("sender throttled by its cgroup's CPU quota in 60 % of periods");
  });

  test("at the threshold the quota held it, just below it the path's facts stand; no periods, no figure", () => {
    const at = (t: number) => run({ throughput_bps: 1.11 * G, link: veth, path: network, receiver: { ...idle, cgroup: quota(t, 10_000) } }).verdict;
    expect(at(limits.CGROUP_THROTTLED_PERCENT * 100)).toBe("receiver-cpu");
    expect(at(limits.CGROUP_THROTTLED_PERCENT * 100 - 1)).toBe("link");
    expect(run({ receiver: { ...idle, cgroup: { periods: 0, throttled: 0, throttled_us: 0 } } }).verdict).toBe("unclear");
  });
});

describe("request/response: what sets a flow's rate", () => {
  const lo = { interface: "veth-a" };
  const at = (client: number, server: number, over: Partial<DiagnosisInput> = {}) =>
    run({ test: "rr", link: lo, throughput_bps: 0.6e6, transactions_per_second: 37_800, latency_p50_us: 19, sender: { ...idle, process: { total: client, user: 10, system: 35 } }, receiver: { ...idle, process: { total: server, user: 10, system: 30 } }, ...over });

  test("a 1-byte RR at 37.8k/s: the ends' CPU per transaction fills its round trip, the busier end named", () => {
    const d = at(45.4, 41.6);
    expect(d.verdict).toBe("sender-cpu");
    expect(d.evidence).toEqual([
      "request/response: 1 flow at 37.8k transactions/s, each 19 µs at p50 (one at a time: a flow's rate is 1 ÷ its round trip); anyperf's CPU per transaction 12 µs at the client and 11 µs at the server, 121 % of the round trip: the ends' processing (system calls, wake-ups), not the network, sets the rate: add flows (-P), pin the threads to cores, or busy-poll",
    ]);
    expect(at(41.6, 45.4).verdict).toBe("receiver-cpu");
  });

  test("little CPU per transaction: the path's latency sets the rate", () => {
    const d = at(1, 1, { transactions_per_second: 5000, latency_p50_us: 200 });
    expect(d.verdict).toBe("link");
    expect(d.evidence[0]).toEndWith("anyperf's CPU per transaction 2 µs at the client and 2 µs at the server, 2.0 % of the round trip: the rest is the path's latency, which sets the rate: add flows (-P) to run transactions side by side");
  });

  test("flows run side by side: CPU per transaction is per flow; at the threshold the ends' processing sets the rate", () => {
    // 2 flows at 20k/s: 10k/s each; 25 % of a core each end = 25 µs a transaction per flow, 50 µs of a 100 µs round trip.
    expect(at(25, 25, { streams: 2, transactions_per_second: 20_000, latency_p50_us: 100 }).verdict).toBe("sender-cpu");
    expect(at(25, 25, { streams: 2, transactions_per_second: 20_000, latency_p50_us: 100.01 }).verdict).toBe("link");
  });

  test("a saturated core or a quota still comes first; no latency or CPU figures: unclear", () => {
    expect(at(45, 41, { receiver: { ...host(2, { 1: { system: 95 } }), process: { total: 60, user: 10, system: 50 } } }).evidence[0]).toStartWith("receiver CPU 1 at 95 %");
    expect(at(45, 41, { latency_p50_us: undefined }).verdict).toBe("unclear");
    expect(run({ test: "rr", transactions_per_second: 1000, latency_p50_us: 1000 }).verdict).toBe("unclear");
  });
});
