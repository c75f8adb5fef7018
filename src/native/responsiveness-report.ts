/**
 * `anyperf client --responsiveness`'s figures: per phase (idle, upload, download, bidir) the load's throughput and the
 * probe's latency, what the load added over idle, RPM, and which direction's queue grew (the load flows' own RTT over
 * their minimum, from each sending end's tcp_path). Pure: built from the phases' Results, tested on hand-made ones.
 */
import { z } from "zod";
import { UserError } from "../errors.ts";
import { addedLatencyUs, queueDrainUs, queueingDelayUs, roundTripsPerMinute } from "../formulas.ts";
import { BacklogSeen } from "../host/backlog-seen.ts";
import type { Results, StreamFigures } from "../report/result.ts";
import type { TcpPath } from "../diagnosis/schema.ts";
import { formatBits, formatBytes } from "../units.ts";
import { formatMicroseconds } from "../report/text.ts";

export const LOADED_PHASES = ["upload", "download", "bidir"] as const;
export type LoadedPhase = (typeof LOADED_PHASES)[number];
export type PhaseName = "idle" | LoadedPhase;

/** Load flows' RTT over their minimum from this much on: a queue grew (a veth or LAN path adds tens of µs). */
export const QUEUE_GREW_US = 1000;

export const ResponsivenessPhase = z.object({
  /** What the load moved over the probe's phase, both directions summed (0 idle); each direction's part. */
  throughput_bps: z.number().nonnegative(),
  upload_bps: z.number().nonnegative(),
  download_bps: z.number().nonnegative(),
  /** The probe's transaction times (TCP 1-byte request/response, on its own connection). */
  latency_us: z.object({ p50: z.number(), p90: z.number(), p99: z.number() }),
  transactions: z.number().nonnegative(),
  /** Probe p50 − idle p50 (loaded phases). */
  added_latency_us: z.number().optional(),
  /** The probe's UDP pings (one every 2 ms, timestamped, echoed): their round trips and how many were answered. */
  udp_latency_us: z.object({ p50: z.number(), p90: z.number(), p99: z.number() }).optional(),
  udp_pings: z.number().nonnegative().optional(),
  /** 60 s ÷ the probe's p50. */
  rpm: z.number().nonnegative(),
  /** The load flows' smoothed RTT − min RTT per direction (their senders' TCP_INFO): the queue each built. */
  queueing_delay_us: z.object({ upload: z.number().optional(), download: z.number().optional() }),
  /** This host's shaping qdisc on the route to the server (tbf, htb), read every 200 ms over the probe's window. */
  client_qdisc: BacklogSeen.optional(),
  /** The server's shaping qdisc on its route to us, read by the serve over the load's window where it sent. */
  server_qdisc: BacklogSeen.optional(),
});
export type ResponsivenessPhase = z.infer<typeof ResponsivenessPhase>;

export const Responsiveness = z.object({
  idle: ResponsivenessPhase.optional(),
  upload: ResponsivenessPhase.optional(),
  download: ResponsivenessPhase.optional(),
  bidir: ResponsivenessPhase.optional(),
  /** RPM under working conditions: both directions loaded (bidir), as the draft loads them. */
  rpm: z.number().optional(),
  /** Which direction's queue grew, one line per loaded phase. */
  evidence: z.array(z.string()),
});
export type Responsiveness = z.infer<typeof Responsiveness>;

const received = (streams: readonly StreamFigures[] | undefined) =>
  (streams ?? []).filter((s) => s.side === "recv").reduce((a, s) => a + s.throughput_bps, 0);

const queueOf = (p: TcpPath | undefined) =>
  p?.srtt_us !== undefined && p.min_rtt_us !== undefined ? queueingDelayUs(p.srtt_us, p.min_rtt_us) : undefined;

/**
 * One phase from the probe's results and the load's (none idle). The load's upload is what the server received, its
 * download what we received; each direction's queue is read from that direction's senders.
 */
export function phaseFigures(probe: Results, load: Results | undefined, idle: ResponsivenessPhase | undefined, qdisc?: BacklogSeen, pings?: Results): ResponsivenessPhase {
  const l = probe.summary.latency_us;
  if (!l) throw new UserError(`the probe completed no transaction over ${probe.phases.measured_s.toFixed(1)} s: every request was lost or held; check the path, or raise -t`);
  const upload = received(load?.remote?.streams);
  const download = received(load?.streams);
  const up = queueOf(load?.tcp_path);
  const down = queueOf(load?.remote?.tcp_path);
  const pu = pings?.summary.latency_us;
  return {
    throughput_bps: upload + download,
    upload_bps: upload,
    download_bps: download,
    latency_us: { p50: l.p50, p90: l.p90, p99: l.p99 },
    transactions: probe.summary.transactions ?? 0,
    // Pings none of which came back (a path that drops UDP, a server without echo) leave the UDP figures out.
    ...(pu ? { udp_latency_us: { p50: pu.p50, p90: pu.p90, p99: pu.p99 }, udp_pings: pings!.summary.transactions ?? 0 } : {}),
    ...(load && idle ? { added_latency_us: addedLatencyUs(l.p50, idle.latency_us.p50) } : {}),
    rpm: roundTripsPerMinute(l.p50),
    queueing_delay_us: { ...(up === undefined ? {} : { upload: up }), ...(down === undefined ? {} : { download: down }) },
    ...(qdisc ? { client_qdisc: qdisc } : {}),
    ...(load?.remote?.qdisc ? { server_qdisc: load.remote.qdisc } : {}),
  };
}

const ms = formatMicroseconds;
const towards = { upload: "client → server (upload)", download: "server → client (download)" } as const;

/**
 * One line per loaded phase: the direction whose queue grew and by how much, or that none did. Loaded one way, the
 * load flows' RTT inflation is that direction's queue (their ACKs cross an idle one); both ways, each flow's ACKs
 * wait in the other direction's queue, so its RTT holds both and only this host's qdisc, where readable, tells them apart.
 */
export function queueEvidence(name: LoadedPhase, p: ResponsivenessPhase): string {
  const dirs = (["upload", "download"] as const).filter((d) => p.queueing_delay_us[d] !== undefined);
  const grew = dirs.filter((d) => p.queueing_delay_us[d]! >= QUEUE_GREW_US);
  const heldBy = (who: string, q: BacklogSeen | undefined) =>
    q ? `; ${who} ${q.kind} on ${q.interface} held ${formatBytes(q.backlog_bytes)} at the median (${ms(queueDrainUs(q.backlog_bytes, q.rate_bps))} at its ${formatBits(q.rate_bps)}), ${formatBytes(q.backlog_max_bytes)} at most` : "";
  const held = heldBy("this host's", p.client_qdisc) + heldBy("the server's", p.server_qdisc);
  const probe = `${p.added_latency_us === undefined ? "" : `; the probe's p50 ${p.added_latency_us >= 0 ? "+" : "−"}${ms(Math.abs(p.added_latency_us))} over idle`}${held}`;
  if (dirs.length === 0) return `${name}: the load flows' RTT unknown (no TCP_INFO)${probe}`;
  if (grew.length === 0) {
    const most = Math.max(...dirs.map((d) => p.queueing_delay_us[d]!));
    return `${name}: no queue grew (the load flows' RTT ${ms(most)} over their minimum)${probe}`;
  }
  if (name === "bidir") {
    const rtts = dirs.map((d) => `the ${d} flows' RTT ${ms(p.queueing_delay_us[d]!)}`).join(", ");
    return `${name}: queues grew: ${rtts} over their minimum (each crosses both directions' queues, its ACKs the other's)${probe}`;
  }
  const parts = grew.map((d) => `${towards[d]} queue grew: its flows' RTT ${ms(p.queueing_delay_us[d]!)} over their minimum`);
  return `${name}: ${parts.join("; ")}${probe}`;
}

/** The document's `responsiveness`, from the phases measured (an interrupted run lacks the later ones). */
export function responsiveness(phases: Partial<Record<PhaseName, ResponsivenessPhase>>): Responsiveness {
  const evidence = LOADED_PHASES.flatMap((n) => (phases[n] ? [queueEvidence(n, phases[n]!)] : []));
  return { ...phases, ...(phases.bidir ? { rpm: phases.bidir.rpm } : {}), evidence };
}

/** The text report: one row per phase, RPM under working conditions, the queue lines. */
export function responsivenessText(r: Responsiveness, head: string): string {
  const out = [head, `${"phase".padEnd(9)}${"throughput".padStart(14)}${"p50".padStart(11)}${"p90".padStart(11)}${"p99".padStart(11)}${"added".padStart(12)}${"RPM".padStart(9)}`];
  for (const n of ["idle", ...LOADED_PHASES] as const) {
    const p = r[n];
    if (!p) continue;
    const added = p.added_latency_us === undefined ? "-" : `${p.added_latency_us >= 0 ? "+" : "−"}${ms(Math.abs(p.added_latency_us))}`;
    const rate = n === "idle" ? "-" : formatBits(p.throughput_bps);
    out.push(`${n.padEnd(9)}${rate.padStart(14)}${ms(p.latency_us.p50).padStart(11)}${ms(p.latency_us.p90).padStart(11)}${ms(p.latency_us.p99).padStart(11)}${added.padStart(12)}${String(Math.round(p.rpm)).padStart(9)}`);
  }
  const pinged = (["idle", ...LOADED_PHASES] as const).flatMap((n) => (r[n]?.udp_latency_us ? [`${n} ${ms(r[n]!.udp_latency_us!.p50)} / ${ms(r[n]!.udp_latency_us!.p99)}`] : []));
  if (pinged.length) out.push(`UDP pings, p50 / p99: ${pinged.join(", ")}`);
  if (r.bidir) out.push(`bidir: ${formatBits(r.bidir.upload_bps)} up, ${formatBits(r.bidir.download_bps)} down`);
  if (r.rpm !== undefined) out.push(`responsiveness: ${Math.round(r.rpm)} RPM (60 s ÷ the probe's median round trip, both directions loaded)`);
  for (const e of r.evidence) out.push(`queue: ${e}`);
  return out.join("\n");
}
