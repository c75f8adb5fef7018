import type { Cidr } from "./access/cidr-schema.ts";
import type { Plan } from "./plan.ts";
import type { StreamSpecInput } from "./stream-spec.ts";

/**
 * A native plan as data streams: receivers (and RR servers) listen, senders (and RR clients) connect. Loopback puts
 * both halves in one process; `anyperf client` and the native server each take the half their end runs.
 */

/** anyperf's own datagram header needs 16 bytes; smaller datagrams go unstamped and loss is sent − received. */
const STAMP_BYTES = 16;
const UDP_RECV_BUFFER = 4 << 20;

/**
 * `allow`: peers the listeners accept (the native server admits only its control connection's peer); `sendersHere`:
 * the senders are streams of this process (loopback).
 */
export function receivers(plan: Plan, at: { host: string; canSetOptions: boolean; allow?: Cidr[]; sendersHere?: boolean }): StreamSpecInput[] {
  const options = plan.socket;
  return Array.from({ length: plan.streams }, (_, id): StreamSpecInput => {
    const listen = { host: at.host, port: plan.port ? plan.port + id : 0 };
    const allow = at.allow;
    if (plan.test !== "stream") {
      // TCP_RR's one connection per stream: the listener closes once it is accepted (one fd per flow, not two).
      const connections = plan.test === "rr" && plan.transport === "tcp" ? 1 : 0;
      // UDP responses echo their request: a client's timestamped pings get their stamps back (any other's bytes are filler).
      return { kind: "rr-server", id, transport: plan.transport, listen, requestSize: plan.requestBytes, responseSize: plan.responseBytes, closeAfterResponse: plan.test === "crr", connections, echo: plan.transport === "udp", options, allow };
    }
    if (plan.transport === "udp") {
      // A bigger receive queue rides out scheduling hiccups of the receiving Worker (iperf3's FAQ says the same: -w 2M).
      const udpOptions = at.canSetOptions ? { recvBuffer: UDP_RECV_BUFFER, ...options } : options;
      return { kind: "udp-recv", id, listen, datagramSize: Math.max(plan.datagramBytes, 1), format: plan.datagramBytes >= STAMP_BYTES ? "anyperf" : "none", options: udpOptions, allow };
    }
    return { kind: "tcp-recv", id, listen, connections: 1, readSize: plan.bufferBytes, options, allow, senderHere: at.sendersHere };
  });
}

/** `-n BYTES` is the total; each stream sends its share (the first ones one byte more when it does not divide). */
function shareOf(total: number, streams: number, id: number): number {
  if (total <= 0) return 0;
  return Math.floor(total / streams) + (id < total % streams ? 1 : 0);
}

export function senders(plan: Plan, to: { host: string; ports: number[] }): StreamSpecInput[] {
  const options = plan.socket;
  const rate = { bitsPerSecond: plan.bitsPerSecond || undefined, packetsPerSecond: plan.packetsPerSecond || undefined };
  return to.ports.map((port, id): StreamSpecInput => {
    const connect = { host: to.host, port };
    if (plan.test !== "stream") {
      return { kind: "rr-client", id, transport: plan.transport, connect, requestSize: plan.requestBytes, responseSize: plan.responseBytes, perTransactionConnect: plan.test === "crr", gapMs: plan.transactionGapMs, options };
    }
    const limitBytes = shareOf(plan.bytes, to.ports.length, id);
    if (plan.transport === "udp") {
      return { kind: "udp-send", id, connect, datagramSize: plan.datagramBytes, format: plan.datagramBytes >= STAMP_BYTES ? "anyperf" : "none", rate, options, limitBytes };
    }
    return { kind: "tcp-send", id, connect, writeSize: plan.bufferBytes, rate, options, limitBytes };
  });
}
