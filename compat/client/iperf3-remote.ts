/**
 * The far end of `anyperf client` against a stock iperf3 server: what the server sent in the results exchange
 * (docs/protocols/iperf3.md §7), its bytes per stream over its own clock and its process CPU, as anyperf's RemoteEnd.
 * Whatever iperf3 does not exchange (host CPU modes, TCP_INFO, socket buffers) stays absent.
 */
import { lossPercent, packetsPerSecond, throughputBps } from "../../src/formulas.ts";
import type { RemoteEnd, StreamFigures } from "../../src/report/result.ts";
import type { Results as PeerResults, StreamResult } from "../../interop/iperf3/results.ts";
import type { TestParams } from "../../interop/iperf3/params.ts";
import { sendsOn, streamId, type Directions } from "../iperf3/side.ts";
import { sumOf } from "./remote-sum.ts";

/** One server stream; `sends`: the server sent on it (its retransmits count), else it received (UDP loss and jitter). */
function streamFigures(s: StreamResult, sends: boolean, udp: boolean): StreamFigures {
  const seconds = s.startTimeS !== undefined && s.endTimeS !== undefined ? Math.max(0, s.endTimeS - s.startTimeS) : 0;
  const f: StreamFigures = { id: s.id, side: sends ? "send" : "recv", connections: 1, bytes: s.bytes, seconds, throughput_bps: throughputBps(s.bytes, seconds) };
  if (udp) {
    f.packets = s.packets;
    f.packets_per_second = packetsPerSecond(s.packets, seconds);
    if (!sends) {
      f.lost = s.errors;
      f.loss_percent = lossPercent(s.errors, s.packets);
      f.jitter_ms = s.jitterS * 1000;
    }
  } else if (sends && s.retransmits >= 0) f.retransmits = s.retransmits;
  return f;
}

/**
 * The server's results as a RemoteEnd. `phases` are this end's (the server's window is its own clock, its streams'
 * seconds say how long); `version` the server's own words when its output came back (`start.version`).
 */
export function iperf3Remote(peer: PeerResults, p: Directions & Pick<TestParams, "protocol">, phases: RemoteEnd["phases"], version: string | undefined): RemoteEnd {
  const udp = p.protocol === "udp";
  const order = new Map(Array.from({ length: p.bidirectional ? 2 * p.parallel : p.parallel }, (_, n) => [streamId(n), n]));
  const streams = peer.streams.map((s) => streamFigures(s, sendsOn(p, "server", order.get(s.id) ?? 0), udp));
  const sent = streams.filter((s) => s.side === "send");
  const received = streams.filter((s) => s.side === "recv");
  const sender = sent.length > 0 ? sumOf(sent, udp) : undefined;
  const receiver = received.length > 0 ? sumOf(received, udp) : undefined;
  return {
    role: "server",
    peer: { name: "iperf3", ...(version !== undefined ? { version } : {}) },
    phases,
    summary: receiver ?? sender ?? sumOf([], udp),
    ...(sender && receiver ? { sender, receiver } : {}),
    totals: { sent_bytes: sender?.bytes, received_bytes: receiver?.bytes, ...(udp ? { sent_packets: sender?.packets, received_packets: receiver?.packets } : {}) },
    streams,
    cpu: { process_percent: peer.cpuUtilTotal },
    retransmits: sender?.retransmits,
    errors: [],
  };
}

/** "iperf 3.12" from the server's own JSON output (--get-server-output), when it sent one. */
export function iperf3Version(peer: PeerResults): string | undefined {
  const start = peer.serverOutputJson?.start;
  const v = start && typeof start === "object" ? (start as Record<string, unknown>).version : undefined;
  return typeof v === "string" && v.length <= 64 ? v.replace(/^iperf /, "") : undefined;
}
