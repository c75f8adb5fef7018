/**
 * The results document both sides exchange after EXCHANGE_RESULTS (docs/protocols/iperf3.md §7). Same schema in both
 * directions; the client writes first. Readers of a 3.12 peer need the three cpu_util keys, sender_has_retransmits and
 * streams, and in every stream id, bytes, retransmits, jitter, errors and packets.
 */
import { z } from "zod";
import { printCompact, type CValue, type PrintOptions } from "./cjson.ts";
import { IErrno } from "./error-codes.ts";
import { Errno } from "../../lib/errno.ts";
import { Iperf3ProtocolError } from "./framing.ts";
import { Limits } from "./constants.ts";
import { WireDouble, WireInt, parseJsonBytes, wireCount, zodToProtocolError } from "./wire-json.ts";

const StreamWire = z.looseObject({
  id: wireCount(1, 1 << 30),
  bytes: wireCount(),
  retransmits: WireInt,
  /** Seconds. */
  jitter: WireDouble,
  errors: WireInt,
  /** 3.14+: what the omit period (-O) saw of errors and packets, which both totals include. */
  omitted_errors: WireInt.optional(),
  packets: WireInt,
  omitted_packets: WireInt.optional(),
  start_time: WireDouble.optional(),
  end_time: WireDouble.optional(),
});

export const ResultsWire = z.looseObject({
  cpu_util_total: WireDouble,
  cpu_util_user: WireDouble,
  cpu_util_system: WireDouble,
  sender_has_retransmits: WireInt,
  congestion_used: z.string().optional(),
  server_output_text: z.string().optional(),
  server_output_json: z.record(z.string(), z.unknown()).optional(),
  streams: z.array(StreamWire).max(2 * Limits.maxStreams),
});

export interface StreamResult {
  id: number;
  bytes: number;
  /** -1 when this side did not send on the stream or cannot count retransmits. */
  retransmits: number;
  jitterS: number;
  errors: number;
  packets: number;
  /** Set by 3.14+ peers and by our server, as 3.14+ servers send them: the part of errors/packets the omit period saw. */
  omitted?: { errors: number; packets: number };
  startTimeS?: number;
  endTimeS?: number;
  /** Keys beyond the 3.12 set (an anyperf server adds TCP_INFO figures); written after the standard keys. */
  extra?: Record<string, CValue>;
}

export interface Results {
  cpuUtilTotal: number;
  cpuUtilUser: number;
  cpuUtilSystem: number;
  /** 1: sends TCP with a retransmit count; 0: sends without one (UDP); -1: only receives. */
  senderHasRetransmits: number;
  congestionUsed?: string;
  serverOutputText?: string;
  serverOutputJson?: Record<string, unknown>;
  streams: StreamResult[];
}

export function decodeResults(json: Uint8Array): Results {
  const raw = parseJsonBytes(json, "results", IErrno.IERECVRESULTS);
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    throw new Iperf3ProtocolError("results: document must be a JSON object", IErrno.IERECVRESULTS, Errno.EINVAL);
  }
  const r = ResultsWire.safeParse(raw);
  if (!r.success) throw zodToProtocolError("results", r.error, IErrno.IERECVRESULTS);
  const w = r.data;
  const ids = new Set<number>();
  for (const s of w.streams) {
    if (ids.has(s.id)) throw new Iperf3ProtocolError(`results: stream id ${s.id} appears twice`, IErrno.IESTREAMID, Errno.OK);
    ids.add(s.id);
  }
  return {
    cpuUtilTotal: w.cpu_util_total,
    cpuUtilUser: w.cpu_util_user,
    cpuUtilSystem: w.cpu_util_system,
    senderHasRetransmits: w.sender_has_retransmits,
    congestionUsed: w.congestion_used,
    serverOutputText: w.server_output_text,
    serverOutputJson: w.server_output_json,
    streams: w.streams.map((s) => {
      const { id, bytes, retransmits, jitter, errors, omitted_errors, packets, omitted_packets, start_time, end_time, ...rest } = s;
      // 3.18 refuses results with one of the pair and not the other; so do we.
      if ((omitted_errors === undefined) !== (omitted_packets === undefined)) {
        throw new Iperf3ProtocolError(`results: stream ${id} has only one of "omitted_errors" and "omitted_packets"`, IErrno.IERECVRESULTS, Errno.EINVAL);
      }
      const omitted = omitted_errors !== undefined && omitted_packets !== undefined ? { errors: omitted_errors, packets: omitted_packets } : undefined;
      const extra = Object.keys(rest).length > 0 ? (rest as Record<string, CValue>) : undefined;
      return { id, bytes, retransmits, jitterS: jitter, errors, packets, omitted, startTimeS: start_time, endTimeS: end_time, extra };
    }),
  };
}

/** Compact JSON in the 3.12 key order. `opts.negativeAsUnsigned` writes -1 the way 3.12 itself does. */
export function encodeResults(r: Results, opts: PrintOptions = {}): string {
  const o: Record<string, CValue> = {
    cpu_util_total: r.cpuUtilTotal,
    cpu_util_user: r.cpuUtilUser,
    cpu_util_system: r.cpuUtilSystem,
    sender_has_retransmits: r.senderHasRetransmits,
  };
  if (r.congestionUsed !== undefined) o.congestion_used = r.congestionUsed;
  if (r.serverOutputJson !== undefined) o.server_output_json = r.serverOutputJson as CValue;
  else if (r.serverOutputText !== undefined) o.server_output_text = r.serverOutputText;
  o.streams = r.streams.map((s) => {
    const so: Record<string, CValue> = {
      id: s.id,
      bytes: s.bytes,
      retransmits: s.retransmits,
      jitter: s.jitterS,
      errors: s.errors,
      ...(s.omitted && { omitted_errors: s.omitted.errors }),
      packets: s.packets,
      ...(s.omitted && { omitted_packets: s.omitted.packets }),
      start_time: s.startTimeS ?? 0,
      end_time: s.endTimeS ?? 0,
    };
    for (const [k, v] of Object.entries(s.extra ?? {})) if (!(k in so)) so[k] = v;
    return so;
  });
  return printCompact(o, opts);
}
