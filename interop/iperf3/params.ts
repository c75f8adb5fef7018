/**
 * The parameter document a client sends after PARAM_EXCHANGE (docs/protocols/iperf3.md §4): zod schema of the wire
 * form, the normalised TestParams both sessions work with, and the encoder that writes keys in the 3.12 client's exact
 * order.
 */
import { z } from "zod";
import { printCompact, type CValue } from "./cjson.ts";
import { Defaults, IPERF_VERSION, Limits } from "./constants.ts";
import { IErrno } from "./error-codes.ts";
import { Errno } from "../../lib/errno.ts";
import { Iperf3ProtocolError } from "./framing.ts";
import { Flag, WireInt, wireCount, parseJsonBytes, zodToProtocolError } from "./wire-json.ts";

/** The wire document; unknown keys (later iperf3: mptcp, gso, ...) are kept and ignored. */
export const ParamsWire = z.looseObject({
  tcp: Flag.optional(),
  udp: Flag.optional(),
  sctp: Flag.optional(),
  omit: wireCount(0, Limits.maxOmitS).optional(),
  server_affinity: WireInt.optional(),
  time: wireCount(0, Limits.maxTimeS).optional(),
  num: wireCount().optional(),
  blockcount: wireCount().optional(),
  MSS: wireCount(0, Limits.maxMss).optional(),
  nodelay: Flag.optional(),
  parallel: wireCount(1, Limits.maxStreams).optional(),
  reverse: Flag.optional(),
  bidirectional: Flag.optional(),
  window: wireCount(0, Limits.maxWindow).optional(),
  len: wireCount(1, Limits.maxBlockSize).optional(),
  bandwidth: wireCount().optional(),
  fqrate: wireCount().optional(),
  pacing_timer: wireCount().optional(),
  burst: wireCount(0, Limits.maxBurst).optional(),
  TOS: wireCount(0, 255).optional(),
  flowlabel: wireCount(0, 0xfffff).optional(),
  title: z.string().max(1024).optional(),
  extra_data: z.string().max(4096).optional(),
  congestion: z.string().max(15).optional(),
  congestion_used: z.string().max(15).optional(),
  get_server_output: Flag.optional(),
  udp_counters_64bit: Flag.optional(),
  repeating_payload: Flag.optional(),
  zerocopy: WireInt.optional(),
  dont_fragment: WireInt.optional(),
  authtoken: z.string().max(4096).optional(),
  client_version: z.string().max(64).optional(),
  /** 3.16-3.21 options anyperf's server does not run (refused in decodeParams). */
  mptcp: Flag.optional(),
  gso: WireInt.optional(),
  gro: WireInt.optional(),
  skip_rx_copy: WireInt.optional(),
});
export type ParamsWire = z.infer<typeof ParamsWire>;

/** What a test is, as both sides agree on it after the parameter exchange. */
export const TestParams = z.object({
  protocol: z.enum(["tcp", "udp"]),
  omitS: z.int().min(0).max(Limits.maxOmitS).default(0),
  /** 0 with a byte or block end condition. */
  timeS: z.int().min(0).max(Limits.maxTimeS).default(Defaults.durationS),
  bytes: z.int().nonnegative().default(0),
  blocks: z.int().nonnegative().default(0),
  parallel: z.int().min(1).max(Limits.maxStreams).default(1),
  reverse: z.boolean().default(false),
  bidirectional: z.boolean().default(false),
  /** Block (TCP write) or datagram size. */
  len: z.int().min(1).max(Limits.maxBlockSize),
  /** Bits/s per stream; 0 = unlimited. */
  bandwidth: z.number().nonnegative().default(0),
  pacingTimerUs: z.int().nonnegative().default(Defaults.pacingTimerUs),
  burst: z.int().min(0).max(Limits.maxBurst).default(0),
  mss: z.int().min(0).max(Limits.maxMss).default(0),
  noDelay: z.boolean().default(false),
  window: z.int().min(0).max(Limits.maxWindow).default(0),
  fqRate: z.number().nonnegative().default(0),
  tos: z.int().min(0).max(255).default(0),
  flowLabel: z.int().min(0).max(0xfffff).default(0),
  title: z.string().optional(),
  extraData: z.string().optional(),
  congestion: z.string().optional(),
  getServerOutput: z.boolean().default(false),
  udpCounters64bit: z.boolean().default(false),
  repeatingPayload: z.boolean().default(false),
  zerocopy: z.boolean().default(false),
  dontFragment: z.boolean().default(false),
  serverAffinity: z.int().optional(),
  /** The client's credentials, RSA-encrypted and base64 (auth.ts); only the server's key reads them. */
  authToken: z.string().optional(),
  clientVersion: z.string().optional(),
});
export type TestParams = z.infer<typeof TestParams>;
export type TestParamsInput = z.input<typeof TestParams>;

/** Streams the server accepts: P, or 2P with --bidir. */
export function streamCount(p: Pick<TestParams, "parallel" | "bidirectional">): number {
  return p.bidirectional ? 2 * p.parallel : p.parallel;
}

/** Decodes and checks a received parameter frame. Throws Iperf3ProtocolError (IERECVPARAMS) with a precise message. */
export function decodeParams(json: Uint8Array): TestParams {
  const raw = parseJsonBytes(json, "parameters", IErrno.IERECVPARAMS);
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    throw new Iperf3ProtocolError("parameters: document must be a JSON object", IErrno.IERECVPARAMS, Errno.EINVAL);
  }
  const r = ParamsWire.safeParse(raw);
  if (!r.success) throw zodToProtocolError("parameters", r.error, IErrno.IERECVPARAMS);
  const w = r.data;
  if (w.sctp !== undefined && w.tcp === undefined && w.udp === undefined) {
    throw new Iperf3ProtocolError("parameters: SCTP is not supported", IErrno.IEPROTOCOL, Errno.OK);
  }
  // As in 3.12: "udp" wins over "tcp" when both are present (the later key is applied last); none means TCP.
  const protocol = w.udp !== undefined ? "udp" : "tcp";
  const has = (v: unknown) => v !== undefined;
  const len = w.len ?? (protocol === "udp" ? Defaults.udpBlockSizeFallback : Defaults.tcpBlockSize);
  if (protocol === "udp" && (len < Limits.minUdpBlockSize || len > Limits.maxUdpBlockSize)) {
    throw new Iperf3ProtocolError(
      `parameters: UDP "len" ${len} is outside ${Limits.minUdpBlockSize}..${Limits.maxUdpBlockSize}`,
      IErrno.IERECVPARAMS,
      Errno.EINVAL,
    );
  }
  const ends = [w.num ?? 0, w.blockcount ?? 0].filter((n) => n > 0).length;
  if (ends > 1) throw new Iperf3ProtocolError("parameters: both \"num\" and \"blockcount\" are set", IErrno.IEENDCONDITIONS, Errno.OK);
  if (has(w.reverse) && has(w.bidirectional)) {
    throw new Iperf3ProtocolError("parameters: \"reverse\" and \"bidirectional\" together", IErrno.IEREVERSEBIDIR, Errno.OK);
  }
  // MPTCP, UDP GSO/GRO and MSG_TRUNC reads would be a different test than the one measured: the client ends on
  // 3.12's IEUNIMP line instead of a figure for a test it did not ask for. gso/gro travel as 0 when not asked.
  // Our paced senders (-R, --bidir at a -b rate) run a token bucket of their own: 3.12's send timer period
  // (--pacing-timer) and its blocks per tick (-b RATE/BURST) shape a different burst pattern than they would.
  const weSendPaced = (has(w.reverse) || has(w.bidirectional)) && (w.bandwidth ?? 0) > 0;
  const unshaped = weSendPaced && [(w.pacing_timer ?? Defaults.pacingTimerUs) !== Defaults.pacingTimerUs && "pacing_timer (--pacing-timer)", (w.burst ?? 0) > 0 && "burst (-b RATE/BURST)"];
  const unrun = [has(w.mptcp) && "mptcp (--mptcp)", w.gso && "gso (--gsro)", w.gro && "gro (--gsro)", w.skip_rx_copy && "skip_rx_copy (--skip-rx-copy)", ...(unshaped || [])].filter((k) => k);
  if (unrun.length > 0) throw new Iperf3ProtocolError(`parameters: ${unrun.join(", ")} not supported by this server`, IErrno.IEUNIMP, Errno.OK);
  return TestParams.parse({
    protocol,
    omitS: w.omit ?? 0,
    timeS: w.time ?? Defaults.durationS,
    bytes: w.num ?? 0,
    blocks: w.blockcount ?? 0,
    parallel: w.parallel ?? 1,
    reverse: has(w.reverse),
    bidirectional: has(w.bidirectional),
    len,
    bandwidth: w.bandwidth ?? 0,
    pacingTimerUs: w.pacing_timer ?? Defaults.pacingTimerUs,
    burst: w.burst ?? 0,
    mss: w.MSS ?? 0,
    noDelay: has(w.nodelay),
    window: w.window ?? 0,
    fqRate: w.fqrate ?? 0,
    tos: w.TOS ?? 0,
    flowLabel: w.flowlabel ?? 0,
    title: w.title,
    extraData: w.extra_data,
    congestion: w.congestion,
    getServerOutput: has(w.get_server_output),
    udpCounters64bit: has(w.udp_counters_64bit),
    repeatingPayload: has(w.repeating_payload),
    zerocopy: (w.zerocopy ?? 0) !== 0,
    dontFragment: (w.dont_fragment ?? 0) !== 0,
    serverAffinity: w.server_affinity,
    authToken: w.authtoken,
    clientVersion: w.client_version,
  });
}

/** The parameter JSON text exactly as a 3.12 client writes it for the same settings. */
export function encodeParams(p: TestParams): string {
  const o: Record<string, CValue> = {};
  o[p.protocol] = true;
  o.omit = p.omitS;
  if (p.serverAffinity !== undefined) o.server_affinity = p.serverAffinity;
  o.time = p.timeS;
  o.num = p.bytes;
  o.blockcount = p.blocks;
  if (p.mss) o.MSS = p.mss;
  if (p.noDelay) o.nodelay = true;
  o.parallel = p.parallel;
  if (p.reverse) o.reverse = true;
  if (p.bidirectional) o.bidirectional = true;
  if (p.window) o.window = p.window;
  if (p.len) o.len = p.len;
  if (p.bandwidth) o.bandwidth = p.bandwidth;
  if (p.fqRate) o.fqrate = p.fqRate;
  if (p.pacingTimerUs) o.pacing_timer = p.pacingTimerUs;
  if (p.burst) o.burst = p.burst;
  if (p.tos) o.TOS = p.tos;
  if (p.flowLabel) o.flowlabel = p.flowLabel;
  if (p.title !== undefined) o.title = p.title;
  if (p.extraData !== undefined) o.extra_data = p.extraData;
  if (p.congestion !== undefined) o.congestion = p.congestion;
  if (p.getServerOutput) o.get_server_output = 1;
  if (p.udpCounters64bit) o.udp_counters_64bit = 1;
  if (p.repeatingPayload) o.repeating_payload = 1;
  if (p.zerocopy) o.zerocopy = 1;
  if (p.dontFragment) o.dont_fragment = 1;
  if (p.authToken !== undefined) o.authtoken = p.authToken;
  o.client_version = p.clientVersion ?? IPERF_VERSION;
  return printCompact(o);
}
