import { bdpBytes, lossPercent, utilizationPercent } from "../formulas.ts";
import { formatBits, formatBytes, formatFixed } from "../units.ts";
import { BusyMode, type CoreLoad, type Diagnosis, type DiagnosisInput, type EndHost } from "./schema.ts";
import {
  CORE_SATURATED_PERCENT,
  FOREIGN_LOAD_PERCENT,
  LINK_FULL_PERCENT,
  RETRANSMIT_HIGH_PERCENT,
  TARGET_REACHED_PERCENT,
  UDP_LOSS_HIGH_PERCENT,
  WINDOW_REACHED_FRACTION,
} from "./thresholds.ts";

/*
 * The seed procedure, in its order: threads (streams against cores), window (BDP against the socket buffers),
 * CPU per core, then the link. A full link is named first, because whatever else was busy, the link was the cap; a
 * sender that kept its -b pace next, as nothing held it; loss comes after the CPU, because a saturated receiver is
 * itself a cause of drops.
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
  const done = (verdict: Diagnosis["verdict"], ...evidence: (string | undefined)[]): Diagnosis => ({
    verdict,
    evidence: evidence.filter((e): e is string => e !== undefined).slice(0, 2),
    ...out,
  });

  const linkName = input.link.interface === undefined ? "" : `${input.link.interface}, `;
  const linkState =
    link === undefined || util === undefined
      ? `the link ran ${formatBits(input.throughput_bps)} (its speed unknown)`
      : `the link ran at ${percent(util)} of its ${formatBits(link)}`;
  const linkNote = link === undefined && input.link.note !== undefined ? `link speed unknown: ${input.link.note}` : undefined;
  const saturated = (["receiver", "sender"] as const)
    .filter((end) => (cores[end]?.busy_percent ?? 0) >= CORE_SATURATED_PERCENT)
    .sort((a, b) => cores[b]!.busy_percent - cores[a]!.busy_percent);
  const coreText = (end: End) => {
    const c = cores[end]!;
    return `${end} CPU ${c.cpu} at ${percent(c.busy_percent)} (${c.mode} ${percent(c.mode_percent)})`;
  };

  if (stream && util !== undefined && util >= LINK_FULL_PERCENT) {
    const also = saturated[0] === undefined ? undefined : `${coreText(saturated[0])} too: near its limit as well`;
    return done(
      "link",
      `${formatBits(input.throughput_bps)} is ${percent(util)} of the link's ${formatBits(link!)} (${linkName}from ${input.link.speed_source ?? "the link"}): the link is the limit`,
      also,
    );
  }

  // A sender paced to -b that kept its pace was held by nothing else, however busy a core looked.
  if (stream && input.target_bps !== undefined && utilizationPercent(input.throughput_bps, input.target_bps) >= TARGET_REACHED_PERCENT) {
    return done("unclear", `ran at its -b target ${formatBits(input.target_bps)} while ${linkState}: raise -b to find the limit`, linkNote);
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

  const end = saturated[0];
  if (end !== undefined) {
    const host = end === "sender" ? input.sender : input.receiver;
    const peer = end === "sender" ? input.receiver : input.sender;
    const own = foreignLoad(cores[end]!, host, input.link.interface === "lo" ? peer : undefined);
    const advice =
      own === undefined
        ? cpuAdvice(cores[end]!, input.streams, host.cores, stream)
        : `anyperf used ${percent(own)} of a core there, so another program holds it: stop it, or test where cores are free`;
    const context = stream ? ` while ${linkState}` : "";
    return done(end === "sender" ? "sender-cpu" : "receiver-cpu", `${coreText(end)}${context}: ${advice}`, stream ? linkNote : undefined);
  }

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
    return done("unclear", `request/response: each transaction waits a round trip, so its rate follows latency, not the link; ${calm}`);
  }
  const windowState = input.transport === "udp" ? "" : window === undefined ? ", window unknown" : ", window not reached";
  return done("unclear", `no limit found: ${linkState}, ${calm}${windowState}`, linkNote);
}
