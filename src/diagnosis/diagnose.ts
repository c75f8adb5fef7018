import { bdpBytes, cpuPerTransactionUs, lossPercent, throttledPercent, utilizationPercent } from "../formulas.ts";
import { formatBits, formatBytes, formatFixed } from "../units.ts";
import { BusyMode, type CoreLoad, type Diagnosis, type DiagnosisInput, type EndHost } from "./schema.ts";
import { readPath, senderTimeText } from "./sender-time.ts";
import {
  CGROUP_THROTTLED_PERCENT,
  CORE_SATURATED_PERCENT,
  FOREIGN_LOAD_PERCENT,
  LIMIT_SHARE_PERCENT,
  LINK_FULL_PERCENT,
  PATH_FULL_PERCENT,
  RETRANSMIT_HIGH_PERCENT,
  RR_HOST_SHARE_PERCENT,
  SENDER_BUSY_PERCENT,
  TARGET_REACHED_PERCENT,
  UDP_LOSS_HIGH_PERCENT,
  WINDOW_REACHED_FRACTION,
} from "./thresholds.ts";

/*
 * The seed procedure, in its order: threads (streams against cores), window (BDP against the socket buffers),
 * CPU per core, then the link. A full link is named first, because whatever else was busy, the link was the cap; a
 * sender that kept its -b pace next, as nothing held it; loss comes after the CPU, because a saturated receiver is
 * itself a cause of drops.
 *
 * Where the sending sockets' TCP_INFO is at hand (a TCP bulk test on Linux), the kernel's own account of the sender's
 * time comes before any guess from CPU or buffer sizes: a socket not busy was held by its application (its -b pace,
 * or a sender that could not keep up), a busy one by the receive window, its send buffer, or the network; only then
 * are the CPU figures asked which end, and a network-limited sender is the path's limit at its delivery rate whatever
 * a core was doing for other programs.
 */

type End = "sender" | "receiver";

/** The busiest core of one end, and the mode that took the largest share of it. */
export function busiestCore(host: EndHost): CoreLoad | undefined {
  let best: CoreLoad | undefined;
  for (const c of host.perCpu ?? []) {
    if (c.busy === undefined || (best && c.busy <= best.busy_percent)) continue;
    let mode: BusyMode = "user";
    for (const m of BusyMode.options) if ((c[m] ?? 0) > (c[mode] ?? 0)) mode = m;
    best = { cpu: c.cpu, busy_percent: c.busy, mode, mode_percent: c[mode] ?? 0 };
  }
  return best;
}

function percent(x: number): string {
  return `${formatFixed(x, x >= 10 ? 0 : x >= 1 ? 1 : 2)} %`;
}

function ms(us: number): string {
  if (us < 1000) return `${formatFixed(us, 0)} µs`;
  return `${formatFixed(us / 1000, us < 10_000 ? 2 : 1)} ms`;
}

function times(streams: number): string {
  return streams > 1 ? `${streams} × ` : "";
}

/**
 * What to do about a saturated core, by the mode that holds it and whether more streams can spread the work. A
 * request/response test's sizes are its own (--rr), so only bulk tests are told to write larger buffers.
 */
function cpuAdvice(load: CoreLoad, streams: number, cores: number | undefined, bulk: boolean): string {
  const moreStreams = cores === undefined || streams < cores;
  const P = moreStreams ? " or add streams (-P)" : "";
  switch (load.mode) {
    case "softirq":
    case "irq":
      return `spread interrupts (RSS/RPS, irqbalance)${P}`;
    case "steal":
      return "the hypervisor takes this core (steal): a larger VM or dedicated cores";
  }
  if (load.mode === "system" && bulk) return `send larger buffers (-l) for fewer system calls${P}`;
  return moreStreams ? "add streams (-P) to use more cores" : `already ${streams} streams on ${cores} cores: this end needs faster cores`;
}

/**
 * anyperf's own CPU when a program other than anyperf must hold the core: the core's task time (user, nice,
 * system) exceeds all anyperf spent on that host, all threads, by FOREIGN_LOAD_PERCENT. Over loopback both ends are
 * one host, so both processes count. Softirq and irq time is the traffic's, whoever it interrupted.
 */
function foreignLoad(load: CoreLoad, host: EndHost, sameHostPeer: EndHost | undefined): number | undefined {
  const core = host.perCpu?.find((c) => c.cpu === load.cpu);
  const own = host.process?.total;
  if (!core || own === undefined || !(load.mode === "user" || load.mode === "nice" || load.mode === "system")) return undefined;
  const ours = own + (sameHostPeer?.process?.total ?? 0);
  const task = (core.user ?? 0) + (core.nice ?? 0) + (core.system ?? 0);
  return task - ours >= FOREIGN_LOAD_PERCENT ? ours : undefined;
}

export function diagnose(input: DiagnosisInput): Diagnosis {
  const link = input.link.speed_bps;
  const stream = input.test === "stream";
  const util = link === undefined ? undefined : utilizationPercent(input.throughput_bps, link);
  const cores: Record<End, CoreLoad | undefined> = { sender: busiestCore(input.sender), receiver: busiestCore(input.receiver) };
  const loss =
    input.transport === "udp"
      ? input.loss_percent
      : input.retransmits !== undefined && input.segments_sent
        ? lossPercent(input.retransmits, input.segments_sent)
        : undefined;
  const window = input.transport === "tcp" && stream ? input.window_bytes : undefined;
  const bdp = input.rtt_us === undefined ? undefined : bdpBytes(link ?? input.throughput_bps, input.rtt_us);

  const out: Omit<Diagnosis, "verdict" | "evidence"> = { busiest_cpu: {} };
  if (link !== undefined) out.link_bps = link;
  if (util !== undefined) out.link_utilization_percent = util;
  if (cores.sender) out.busiest_cpu.sender = cores.sender;
  if (cores.receiver) out.busiest_cpu.receiver = cores.receiver;
  if (bdp !== undefined) out.bdp_bytes = bdp;
  if (window !== undefined) out.window_bytes = window;
  if (loss !== undefined) out.loss_percent = loss;
  const path = stream && input.transport === "tcp" && input.path && input.path.busy_us > 0 ? readPath(input.path, input.throughput_bps) : undefined;
  if (path) {
    out.sender_time = path.shares;
    if (path.bottleneck_bps !== undefined) out.bottleneck_bps = path.bottleneck_bps;
    if (path.queueing_delay_us !== undefined) out.queueing_delay_us = path.queueing_delay_us;
  }
  // A sender below its -b pace is said whatever the verdict (the verdict says why, if anything held it).
  const missedPace =
    stream && input.target_bps !== undefined && input.sent_bps !== undefined && utilizationPercent(input.sent_bps, input.target_bps) < TARGET_REACHED_PERCENT
      ? `the sender missed its -b pace: sent ${formatBits(input.sent_bps)}, ${percent(utilizationPercent(input.sent_bps, input.target_bps))} of ${formatBits(input.target_bps)}`
      : undefined;
  const done = (verdict: Diagnosis["verdict"], first: string, ...evidence: (string | undefined)[]): Diagnosis => ({
    verdict,
    evidence: [first, missedPace, ...evidence, foreignNote].filter((e): e is string => e !== undefined).slice(0, 3),
    ...out,
  });

  const linkName = input.link.interface === undefined ? "" : `${input.link.interface}, `;
  const linkState =
    link === undefined || util === undefined
      ? `the link ran ${formatBits(input.throughput_bps)} (its speed unknown)`
      : `the link ran at ${percent(util)} of its ${formatBits(link)}`;
  const linkNote = link === undefined && input.link.note !== undefined ? `link speed unknown: ${input.link.note}` : undefined;
  const coreText = (end: End) => {
    const c = cores[end]!;
    return `${end} CPU ${c.cpu} at ${percent(c.busy_percent)} (${c.mode} ${percent(c.mode_percent)})`;
  };
  // A saturated core that another program holds is not what limited anyperf (on a loaded machine its threads run
  // on the other cores): it is said beside the verdict, never as it.
  const foreign = new Map<End, number>();
  const saturated = (["receiver", "sender"] as const)
    .filter((end) => (cores[end]?.busy_percent ?? 0) >= CORE_SATURATED_PERCENT)
    .filter((end) => {
      const own = foreignLoad(cores[end]!, end === "sender" ? input.sender : input.receiver, input.link.interface === "lo" ? (end === "sender" ? input.receiver : input.sender) : undefined);
      if (own !== undefined) foreign.set(end, own);
      return own === undefined;
    })
    .sort((a, b) => cores[b]!.busy_percent - cores[a]!.busy_percent);
  const foreignNote = [...foreign].map(([end, own]) => `${coreText(end)} is held by another program (anyperf used ${percent(own)} of a core there): it may have slowed the run; test where cores are free`)[0];

  const busiestText = (end: End) => (cores[end] === undefined ? "no per-core CPU figures" : `busiest ${coreText(end)}`);
  const raiseWindow = "raise the window (-w, net.ipv4.tcp_rmem/tcp_wmem) or add streams (-P)";
  const windowText = () =>
    window === undefined ? undefined : `${times(input.streams)}socket buffer ${formatBytes(window)}${input.rtt_us === undefined ? "" : `, in flight ${formatBytes(bdpBytes(input.throughput_bps, input.rtt_us))} (${formatBits(input.throughput_bps)} × ${ms(input.rtt_us)} RTT)`}`;
  const queueText = () =>
    path?.queueing_delay_us === undefined || input.path?.min_rtt_us === undefined
      ? undefined
      : `queueing delay ${ms(path.queueing_delay_us)}: smoothed RTT ${ms(input.path.srtt_us!)} over the path's min RTT ${ms(input.path.min_rtt_us)}`;
  const hostOf = (end: End) => (end === "sender" ? input.sender : input.receiver);
  const throttled = (end: End) => {
    const c = hostOf(end).cgroup;
    return c && c.periods > 0 ? throttledPercent(c.throttled, c.periods) : undefined;
  };
  const quotaHeld = (["receiver", "sender"] as const)
    .filter((end) => (throttled(end) ?? 0) >= CGROUP_THROTTLED_PERCENT)
    .sort((a, b) => throttled(b)! - throttled(a)!);
  /** An end whose CPU held it: a core saturated, or its cgroup out of quota. */
  const held = (end: End) => saturated.includes(end) || quotaHeld.includes(end);
  /** A held end's verdict: its cgroup's quota, else the core, what held it, what to do; `why` is the socket facts that point there. */
  const cpuVerdict = (end: End, why?: string): Diagnosis => {
    const verdict = end === "sender" ? "sender-cpu" : "receiver-cpu";
    if (quotaHeld.includes(end)) {
      const c = hostOf(end).cgroup!;
      const quota = c.quota_cores === undefined ? "" : `, quota ${formatFixed(c.quota_cores, 2)} of a core`;
      return done(
        verdict,
        `${end} throttled by its cgroup's CPU quota in ${percent(throttled(end)!)} of periods (${formatFixed(c.throttled_us / 1e6, 1)} s throttled${quota}): raise the pod's CPU limit (cpu.max, cpu.cfs_quota_us)`,
        why,
      );
    }
    const advice = cpuAdvice(cores[end]!, input.streams, hostOf(end).cores, stream);
    const context = why !== undefined ? ` (${why})` : stream ? ` while ${linkState}` : "";
    return done(verdict, `${coreText(end)}${context}: ${advice}`, stream && why === undefined ? linkNote : undefined);
  };

  // The sender's own account of a window that held it most of its busy time outranks a link that looks full.
  const windowHeld = path !== undefined && path.shares.rwnd_limited_percent + path.shares.sndbuf_limited_percent >= LIMIT_SHARE_PERCENT;
  if (stream && util !== undefined && util >= LINK_FULL_PERCENT && !windowHeld) {
    const also = saturated[0] === undefined ? undefined : `${coreText(saturated[0])} too: near its limit as well`;
    return done(
      "link",
      `${formatBits(input.throughput_bps)} is ${percent(util)} of the link's ${formatBits(link!)} (${linkName}from ${input.link.speed_source === "qdisc" ? `its ${input.link.shaper!.kind} qdisc` : (input.link.speed_source ?? "the link")}): the link is the limit`,
      also,
    );
  }

  // A sender paced to -b that kept its pace was held by nothing else, however busy a core looked.
  if (stream && input.target_bps !== undefined && utilizationPercent(input.throughput_bps, input.target_bps) >= TARGET_REACHED_PERCENT) {
    if (path) {
      const carried = path.bottleneck_bps === undefined ? "" : `; the path carried ${input.path!.delivery_app_limited ? "at least " : ""}${formatBits(path.bottleneck_bps)}`;
      return done(
        "unclear",
        `nothing limited: the sender kept its -b pace ${formatBits(input.target_bps)} (its socket idle ${percent(path.shares.application_percent)} of the window, waiting on its pace)${carried}: raise -b to find the limit`,
        queueText(),
      );
    }
    return done("unclear", `ran at its -b target ${formatBits(input.target_bps)} while ${linkState}: raise -b to find the limit`, linkNote);
  }

  if (path) {
    const s = path.shares;
    const shares = senderTimeText(s);
    // A cgroup out of quota stops its threads for the rest of each period, holding the socket lock mid-read or
    // mid-write: the packets wait in the backlog unacknowledged, the RTT swells and the sender's cwnd looks like the
    // network's, or its socket runs dry. The kernel's own throttling count comes before what the sender saw.
    const quotaEnd = quotaHeld[0];
    if (quotaEnd !== undefined) return cpuVerdict(quotaEnd, shares);
    if (s.busy_percent < SENDER_BUSY_PERCENT) {
      if (held("sender")) return cpuVerdict("sender", shares);
      return done("unclear", `${shares}: the sender's application left its socket idle ${percent(s.application_percent)} of the window, yet no sender core was saturated (${busiestText("sender")}) nor its CPU quota throttled: the facts disagree`);
    }
    // A socket buffer wholly in flight holds the sender as surely as a closed window, yet the kernel's chrono counts
    // that time as busy (network), not as limited: a 4 KiB -w on a veth read 25-45 % rwnd-limited, the rest network.
    const full = window !== undefined && input.rtt_us !== undefined && bdpBytes(input.throughput_bps, input.rtt_us) >= WINDOW_REACHED_FRACTION * input.streams * window;
    if (windowHeld || full) {
      // A full window is the window's fault however busy the receiver; a receive window held below the buffer is a
      // receiver that did not read.
      const receiverHeld = s.rwnd_limited_percent >= s.sndbuf_limited_percent;
      if (!full && receiverHeld && held("receiver")) return cpuVerdict("receiver", shares);
      if (!windowHeld) return done("window", `${shares}: its socket buffer was in flight all along (the kernel counts that as network time): ${raiseWindow}`, windowText());
      if (full || !receiverHeld) return done("window", `${shares}: ${receiverHeld ? "the receive window" : "its own send buffer"} held it: ${raiseWindow}`, windowText());
      return done(
        "window",
        `${shares}: the receive window held it below its buffer, yet no receiver core was saturated (${busiestText("receiver")}) nor its CPU quota throttled: ${raiseWindow}`,
        windowText(),
      );
    }
    // Busy and neither window: the network's cwnd and pacing held it. Over loopback there is no network: the
    // cwnd there only follows how fast the same host's cores turn segments around, so the CPU figures decide below.
    if (input.link.interface !== "lo") {
      if (loss !== undefined && loss >= RETRANSMIT_HIGH_PERCENT) {
        return done("loss", `${percent(loss)} of segments retransmitted while ${shares}: the path drops packets; find the congested queue or lossy hop`, queueText());
      }
      const bottleneck = path.bottleneck_bps;
      if (bottleneck !== undefined && utilizationPercent(input.throughput_bps, bottleneck) >= PATH_FULL_PERCENT) {
        const shaper = input.link.shaper && `, ${input.link.interface ?? "its interface"} shaped by ${input.link.shaper.kind} to ${formatBits(input.link.shaper.rate_bps)}`;
        return done("link", `${shares}: the path is the limit at ${formatBits(bottleneck)} (delivery rate ${formatBits(input.path!.delivery_bps!)}, goodput ${formatBits(input.throughput_bps)}${shaper ?? ""})`, queueText());
      }
      return done(
        "unclear",
        bottleneck === undefined
          ? `${shares}, but no delivery rate was read to say at what rate: the facts are incomplete`
          : `${shares}, yet the goodput ${formatBits(input.throughput_bps)} is only ${percent(utilizationPercent(input.throughput_bps, bottleneck))} of the ${formatBits(bottleneck)} the path delivered: the facts disagree`,
      );
    }
  }

  if (window !== undefined && input.rtt_us !== undefined && bdp !== undefined) {
    const capacity = input.streams * window;
    const inFlight = bdpBytes(input.throughput_bps, input.rtt_us);
    if (inFlight >= WINDOW_REACHED_FRACTION * capacity && (link === undefined || bdp > capacity)) {
      const raise = `raise the window (-w, net.ipv4.tcp_rmem/tcp_wmem) or add streams (-P)`;
      return done(
        "window",
        link === undefined
          ? `in flight ${formatBytes(inFlight)} (${formatBits(input.throughput_bps)} × ${ms(input.rtt_us)} RTT) reaches ${times(input.streams)}socket buffer ${formatBytes(window)}: ${raise}`
          : `BDP ${formatBytes(bdp)} (${formatBits(link)} × ${ms(input.rtt_us)} RTT) > ${times(input.streams)}socket buffer ${formatBytes(window)}: ${raise}`,
        linkNote,
      );
    }
  }

  const end = quotaHeld[0] ?? saturated[0];
  if (end !== undefined) return cpuVerdict(end);

  if (loss !== undefined && loss >= (input.transport === "udp" ? UDP_LOSS_HIGH_PERCENT : RETRANSMIT_HIGH_PERCENT)) {
    return done(
      "loss",
      input.transport === "udp"
        ? `${percent(loss)} of datagrams lost with no core saturated while ${linkState}: lower -b, or find the drop (receive buffer -w, NIC rx_drop)`
        : `${percent(loss)} of segments retransmitted with no core saturated while ${linkState}: the path drops packets; find the congested queue or lossy hop`,
      linkNote,
    );
  }

  const busiest = (["receiver", "sender"] as const).filter((e) => cores[e] !== undefined).sort((a, b) => cores[b]!.busy_percent - cores[a]!.busy_percent)[0];
  const calm = busiest === undefined ? "no per-core CPU figures" : `busiest ${coreText(busiest)}`;
  if (!stream) {
    const tps = input.transactions_per_second;
    const rt = input.latency_p50_us;
    const cpu = (h: EndHost) => (h.process === undefined || !tps ? undefined : cpuPerTransactionUs(h.process.total, tps / input.streams));
    const client = cpu(input.sender), server = cpu(input.receiver);
    if (tps && rt !== undefined && client !== undefined && server !== undefined) {
      // Each flow's transactions follow one another: a flow's rate is 1 ÷ its round trip, which is the path's
      // latency plus both ends' processing; CPU per transaction is per flow (flows run side by side).
      const share = utilizationPercent(client + server, rt);
      const flows = `${input.streams} flow${input.streams > 1 ? "s" : ""} at ${formatFixed(tps / 1000, 1)}k transactions/s, each ${ms(rt)} at p50 (one at a time: a flow's rate is 1 ÷ its round trip)`;
      const spent = `anyperf's CPU per transaction ${ms(client)} at the client and ${ms(server)} at the server, ${percent(share)} of the round trip`;
      if (share >= RR_HOST_SHARE_PERCENT) {
        return done(
          client >= server ? "sender-cpu" : "receiver-cpu",
          `request/response: ${flows}; ${spent}: the ends' processing (system calls, wake-ups), not the network, sets the rate: add flows (-P), pin the threads to cores, or busy-poll`,
        );
      }
      return done("link", `request/response: ${flows}; ${spent}: the rest is the path's latency, which sets the rate: add flows (-P) to run transactions side by side`);
    }
    return done("unclear", `request/response: each transaction waits a round trip, so its rate follows latency, not the link; ${calm}`);
  }
  const windowState = input.transport === "udp" ? "" : window === undefined ? ", window unknown" : ", window not reached";
  return done("unclear", `no limit found: ${linkState}, ${calm}${windowState}`, linkNote);
}
