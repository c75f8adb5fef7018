import { Plan } from "../plan.ts";
import type { TestRequest } from "./protocol/messages.ts";
import type { RemoteEnd, Results } from "../report/result.ts";
import type { TcpBufferCeilings } from "../host/link-facts.ts";

/** What the client puts on the wire for a plan, and what each end makes of it: the same Plan, mirrored. */
export type Direction = TestRequest["direction"];

export function requestOf(plan: Plan, direction: Direction): TestRequest {
  return {
    transport: plan.transport,
    test: plan.test,
    direction,
    streams: plan.streams,
    durationS: plan.bytes > 0 ? 0 : plan.durationS,
    bytes: plan.bytes,
    warmupS: plan.warmupS,
    cooldownS: plan.cooldownS,
    bufferBytes: plan.bufferBytes,
    datagramBytes: plan.datagramBytes,
    bitsPerSecond: plan.bitsPerSecond,
    packetsPerSecond: plan.packetsPerSecond,
    requestBytes: plan.requestBytes,
    responseBytes: plan.responseBytes,
    ...(plan.socket.sendBuffer === undefined ? {} : { windowBytes: plan.socket.sendBuffer }),
  };
}

/** The server's plan for a request (the durations are the client's clock; the server keeps them for its report). */
export function planOf(req: TestRequest): Plan {
  const { direction: _d, durationS, windowBytes, ...rest } = req;
  const socket = windowBytes === undefined ? {} : { sendBuffer: windowBytes, recvBuffer: windowBytes };
  return Plan.parse({ ...rest, durationS: durationS || 1, intervalS: 1, socket });
}

/** Which halves an end runs: the client sends forward, the server reverse, both bidir; RR clients are the client. */
export function halves(req: Pick<TestRequest, "direction" | "test">, end: "client" | "server"): { sends: boolean; receives: boolean } {
  if (req.test !== "stream") return { sends: end === "client", receives: end === "server" };
  const clientSends = req.direction !== "reverse";
  const serverSends = req.direction !== "forward";
  return end === "client" ? { sends: clientSends, receives: serverSends } : { sends: serverSends, receives: clientSends };
}

/**
 * The part of an end's results that travels to the other end (intervals stay home). An end that only receives (or
 * only sends) names its summary as its receiver (sender) figures, as an end with both does.
 */
export function remoteEnd(r: Results, tcpBuffers: TcpBufferCeilings): RemoteEnd {
  const { version, role, phases, summary, totals, streams, cpu, retransmits, tcp_path, flows, errors, socket_buffers } = r;
  const only = (side: "send" | "recv") => streams.length > 0 && streams.every((s) => s.side === side);
  return {
    version, role, phases, summary, totals, streams, cpu, retransmits, tcp_path, flows, socket_buffers,
    sender: r.sender ?? (only("send") ? summary : undefined),
    receiver: r.receiver ?? (only("recv") ? summary : undefined),
    errors: errors.slice(0, 64).map((e) => e.slice(0, 1000)),
    tcp_buffers: tcpBuffers,
  };
}
