import { type ClientHeader, UDP_HEADER_OFFSET, clientHeaderLength, decodeClientHeader } from "./client-header.ts";
import { type ClientRequest, describeClientHeader } from "./client-request.ts";
import { IPERF2_DATAGRAM_HEADER, UDP_TRIP_START_AT, readIperf2 } from "./datagram.ts";
import { type ServerReport, encodeServerReport } from "./server-report.ts";
import { type DatagramTransport, type Peer, peerKey } from "./transport.ts";
import { UdpReceiverStats } from "./udp-receiver-stats.ts";
import { IsochFrames, type IsochSettings, UDP_ISOCH_SETTINGS_AT, isochOffset, readIsochPayload, readIsochSettings } from "./isoch-frames.ts";
import { HeaderFlag, hasFlag } from "./flags.ts";
import { Iperf2WireError } from "./wire-error.ts";
import { u32 } from "./words.ts";

/** The client header at offset 16, or null when the datagram carries none we understand (then: plain datagrams). */
function headerOf(bytes: Uint8Array): ClientHeader | null {
  if (bytes.length < UDP_HEADER_OFFSET + 4) return null;
  try {
    const length = clientHeaderLength(u32(bytes, UDP_HEADER_OFFSET), "udp");
    if (length === null || bytes.length < UDP_HEADER_OFFSET + length) return null;
    return decodeClientHeader(bytes.subarray(UDP_HEADER_OFFSET), "udp");
  } catch (e) {
    if (!(e instanceof Iperf2WireError)) throw e;
    return null;
  }
}

/** How far a --trip-times client's start may be from our clock before it is not taken (stock: 10 s, plus 1). */
const TRIP_START_SLACK_S = 11;


/**
 * A --trip-times client's start (wall clock, seconds). Stock's server counts the flow's time from it, so both ends'
 * intervals hold the same datagrams.
 */
function tripStartOf(d: Uint8Array, arrival: number): number | undefined {
  if (d.length < UDP_TRIP_START_AT + 8) return undefined;
  const usec = u32(d, UDP_TRIP_START_AT + 4);
  const start = u32(d, UDP_TRIP_START_AT) + usec / 1e6;
  return usec < 1e6 && Math.abs(arrival - start) <= TRIP_START_SLACK_S ? start : undefined;
}

function sendFramesOf(first: Uint8Array, at: number): { sendFrames?: IsochSettings & { at: number } } {
  const settings = readIsochSettings(first, UDP_ISOCH_SETTINGS_AT);
  return settings ? { sendFrames: { ...settings, at } } : {};
}

export interface UdpFlow {
  id: number;
  peer: Peer;
  header: ClientHeader | null;
  request: ClientRequest | null;
  stats: UdpReceiverStats;
  /** An --isochronous client's frames, and where each datagram carries its frame payload. */
  frames?: { at: number; counts: IsochFrames };
  /** An --isochronous -R client's frames to send it, as its header asks. */
  sendFrames?: IsochSettings & { at: number };
  /** The report we answer every FIN with, once the first FIN arrived. */
  report: Uint8Array | null;
  lastSeen: number;
}

export interface UdpServerEvents {
  /** First datagram of a new flow (a source address:port not seen or already finished). */
  flow(f: UdpFlow): void;
  /** The flow's first FIN arrived and was answered. */
  end(f: UdpFlow, report: ServerReport): void;
  /** A datagram that is not iperf 2 traffic was dropped. */
  dropped?(from: Peer, e: Iperf2WireError): void;
}

export interface UdpServerOptions {
  /** Server -e: flag the latency words in the report, so the client prints them. */
  enhanced: boolean;
  /** At most this many flows at once; datagrams of further new flows are dropped. */
  maxFlows: number;
  /** Flows silent for this long are forgotten (seconds). */
  idleSeconds: number;
}

const DEFAULTS: UdpServerOptions = { enhanced: false, maxFlows: 1024, idleSeconds: 30 };

/**
 * Server side of iperf 2 UDP on one port: every source address:port is a flow with its own counters (stock clients
 * with -P use one socket per stream), the client header is read from offset 16 of the first datagram, and each FIN
 * (negative sequence) is answered with the 128-byte report to its source. Later FINs of the same flow (the client
 * resends until it hears back) get the same report again, so a lost report costs nothing.
 */
export class UdpServerSession {
  private readonly flows = new Map<string, UdpFlow>();
  private readonly options: UdpServerOptions;
  private nextId = 1;

  constructor(
    private readonly transport: DatagramTransport,
    private readonly events: UdpServerEvents,
    options: Partial<UdpServerOptions> = {},
  ) {
    this.options = { ...DEFAULTS, ...options };
  }

  get activeFlows(): number {
    return this.flows.size;
  }

  /** The flow of the client at `peer`, while we remember it. */
  flowAt(peer: Peer): UdpFlow | undefined {
    return this.flows.get(peerKey(peer));
  }

  /** `arrival` = receiver wall clock in seconds (Unix epoch), the clock the sender's stamps use. */
  onDatagram(bytes: Uint8Array, from: Peer, arrival: number): void {
    if (bytes.length < IPERF2_DATAGRAM_HEADER) {
      this.events.dropped?.(from, new Iperf2WireError("short", `datagram of ${bytes.length} bytes carries no iperf 2 sequence number`));
      return;
    }
    const key = peerKey(from);
    let flow = this.flows.get(key);
    const header = flow ? flow.header : headerOf(bytes);
    const stamp = readIperf2(bytes, header === null || hasFlag(header.flags, HeaderFlag.seqno64) || !hasFlag(header.flags, HeaderFlag.extend));
    if (flow?.report && stamp.seq > 0) {
      // A finished flow's port reused by a new test.
      this.flows.delete(key);
      flow = undefined;
    }
    if (!flow) {
      if (stamp.seq < 0) {
        // A FIN for a flow we never saw (restarted server): answer with an empty report so the client ends cleanly.
        this.transport.send(encodeServerReport(new UdpReceiverStats().report(this.options.enhanced)), from);
        return;
      }
      if (this.flows.size >= this.options.maxFlows) return;
      flow = this.open(headerOf(bytes), from, arrival, bytes);
    }
    flow.lastSeen = arrival;
    if (flow.report) {
      if (stamp.seq < 0) this.transport.send(flow.report, from);
      return;
    }
    flow.stats.add(stamp.seq, stamp.sec + stamp.usec / 1e6, arrival, bytes.length);
    if (flow.frames && stamp.seq > 0) {
      const p = readIsochPayload(bytes, flow.frames.at);
      if (p) flow.frames.counts.add(p, bytes.length, arrival);
    }
    if (stamp.seq < 0) {
      // A --trip-times client reads the latency fields whatever our -e says, as a stock server sends them.
      const report = flow.stats.report(this.options.enhanced || flow.request?.tripTimes === true);
      flow.report = encodeServerReport(report);
      this.transport.send(flow.report, from);
      this.events.end(flow, report);
    }
  }

  private open(header: ClientHeader | null, from: Peer, arrival: number, first: Uint8Array): UdpFlow {
    const request = header ? describeClientHeader(header, "udp") : null;
    const stats = new UdpReceiverStats();
    const start = request?.tripTimes ? tripStartOf(first, arrival) : undefined;
    if (start !== undefined) stats.startAt = start;
    const at = header && request?.isochronous ? isochOffset(header) : undefined;
    const flow: UdpFlow = {
      id: this.nextId++,
      peer: { ...from },
      header,
      request,
      stats,
      ...(at === undefined ? {} : { frames: { at, counts: new IsochFrames() } }),
      ...(at !== undefined && request?.direction === "reverse" ? sendFramesOf(first, at) : {}),
      report: null,
      lastSeen: arrival,
    };
    this.flows.set(peerKey(from), flow);
    this.events.flow(flow);
    return flow;
  }

  /** Forgets flows idle for longer than the limit; returns those that never sent a FIN (their clients vanished). */
  expire(now: number): UdpFlow[] {
    const gone: UdpFlow[] = [];
    for (const [key, f] of this.flows) {
      if (now - f.lastSeen > this.options.idleSeconds) {
        this.flows.delete(key);
        if (!f.report) gone.push(f);
      }
    }
    return gone;
  }
}
