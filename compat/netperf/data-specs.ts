import { readFileSync } from "node:fs";
import type { StreamCounters } from "../../src/counters.ts";
import type { SocketOptions, StreamSpecInput } from "../../src/stream-spec.ts";
import type { ClientDataCounters } from "../../interop/netperf/client-session.ts";
import type { ServerDataCounters, ServerDataSetup } from "../../interop/netperf/data-setup.ts";
import type { MigratedTest } from "../../interop/netperf/test-request.ts";
import { defaultBuffers, setBuffers } from "../../src/host/socket-defaults.ts";

/**
 * netperf tests as engine streams: what each side's Worker runs, and how its counters read back as netperf's
 * (bytes, calls, transactions). Socket buffer figures come from the kernel's defaults, or twice a size that was set
 * (Linux reports double), as netperf reads them back with getsockopt.
 */

/** The 8-byte pattern netperf fills its buffers with. */
export function netperfPayload(size: number): Uint8Array<ArrayBuffer> {
  const pattern = new TextEncoder().encode("netperf\0");
  const out = new Uint8Array(size);
  for (let i = 0; i < size; i++) out[i] = pattern[i % 8]!;
  return out;
}

/** SO_SNDBUF / SO_RCVBUF as getsockopt would report them after an optional setsockopt. */
export function effectiveBuffers(protocol: "tcp" | "udp", send?: number, recv?: number): { send: number; recv: number } {
  const dSend = protocol === "tcp" ? defaultBuffers.tcpSend : defaultBuffers.udpSend;
  const dRecv = protocol === "tcp" ? defaultBuffers.tcpRecv : defaultBuffers.udp;
  return {
    send: send === undefined || send <= 0 ? dSend() : setBuffers.send(send),
    recv: recv === undefined || recv <= 0 ? dRecv() : setBuffers.recv(recv),
  };
}

export function defaultCongestion(): string {
  try {
    return readFileSync("/proc/sys/net/ipv4/tcp_congestion_control", "utf8").trim();
  } catch {
    return "";
  }
}

function socketOptions(o: { sendBuffer?: number; recvBuffer?: number; noDelay?: boolean; keepAlive?: boolean; cork?: boolean; mss?: number; congestion?: string; tos?: number }): SocketOptions {
  const out: SocketOptions = {};
  if (o.cork) out.cork = true;
  if (o.mss !== undefined && o.mss > 0) out.mss = o.mss;
  if (o.keepAlive) out.keepAlive = true;
  if (o.sendBuffer !== undefined && o.sendBuffer > 0) out.sendBuffer = o.sendBuffer;
  if (o.recvBuffer !== undefined && o.recvBuffer > 0) out.recvBuffer = o.recvBuffer;
  if (o.noDelay) out.noDelay = true;
  if (o.congestion) out.congestion = o.congestion;
  if (o.tos !== undefined && o.tos > 0) out.tos = o.tos;
  return out;
}

/**
 * The server's data socket options. netserver sets TCP_NODELAY only on TCP sockets although it keeps NO_DELAY in
 * its reply for a UDP test, and SO_KEEPALIVE where the client's -S asks (a UDP socket has nothing to keep alive).
 */
export function serverSocketOptions(setup: ServerDataSetup): SocketOptions {
  const tcp = setup.protocol === "tcp";
  return socketOptions({ ...setup, noDelay: setup.noDelay && tcp, keepAlive: setup.keepAlive && tcp, tos: setup.tos });
}

/** The server's data stream for a DO_OMNI (TCP_MAERTS excepted: its socket is accepted on the main thread). */
export function serverSpec(setup: ServerDataSetup): StreamSpecInput {
  const listen = { host: setup.bindAddress, port: setup.port };
  const options = serverSocketOptions(setup);
  const family = setup.family;
  const limits = { limitBytes: setup.limitBytes, limitTransactions: setup.limitTransactions, idleTimeoutMs: setup.idleTimeoutMs };
  if (setup.serverReceives && setup.serverSends) {
    return {
      kind: "rr-server",
      id: 0,
      transport: setup.protocol,
      listen,
      options,
      family,
      ...limits,
      requestSize: setup.requestSize,
      responseSize: setup.responseSize,
      closeAfterResponse: setup.connectPerTransaction,
      connections: setup.connectPerTransaction || setup.protocol === "udp" ? 0 : 1,
    };
  }
  if (setup.protocol === "udp") {
    return { kind: "udp-recv", id: 0, listen, options, family, ...limits, datagramSize: 65535, format: "none", endOn: "zero-length" };
  }
  return { kind: "tcp-recv", id: 0, listen, options, family, ...limits, connections: 1, endOnEof: true };
}

/**
 * A TCP sender's calls as netperf counts them: one blocking send() per message of the send size. Our non-blocking
 * writes may each take part of a message, so the engine's write count would overstate them.
 */
const tcpSends = (bytes: number, sendSize: number) => Math.ceil(bytes / Math.max(1, sendSize));

/** `sendSize`: the message size a TCP_MAERTS server writes. */
export function serverCounters(setup: ServerDataSetup, c: StreamCounters, sendSize = 0): Omit<ServerDataCounters, "recvBufSize" | "sendBufSize" | "transportRetrans" | "congestionName" | "cpu"> {
  if (setup.serverReceives && setup.serverSends) {
    const t = c.transactions;
    return { bytesReceived: t * setup.requestSize, recvCalls: t, bytesSent: t * setup.responseSize, sendCalls: t, transactions: t };
  }
  if (setup.serverSends) return { bytesReceived: 0, recvCalls: 0, bytesSent: c.bytes, sendCalls: tcpSends(c.bytes, sendSize), transactions: 0 };
  return { bytesReceived: c.bytes, recvCalls: c.packets, bytesSent: 0, sendCalls: 0, transactions: 0 };
}

export interface ClientSpecInput {
  test: MigratedTest;
  dataHost: string;
  dataPort: number;
  family: "ipv4" | "ipv6";
  localAddress?: string;
  localPort: number;
  sendSize: number;
  recvSize: number;
  requestSize: number;
  responseSize: number;
  firstBurst: number;
  /** -l -N: transactions (RR) or bytes (stream). */
  count: number;
  sendBuffer?: number;
  recvBuffer?: number;
  noDelay: boolean;
  /** -S: SO_KEEPALIVE on a TCP data socket. */
  keepAlive?: boolean;
  /** -- -C and -- -G: TCP_CORK and TCP_MAXSEG on a TCP data socket. */
  cork?: boolean;
  mss?: number;
  congestion?: string;
  tos?: number;
  /** Stream tests: time each send/recv call for the latency selectors (netperf keeps that histogram only then). */
  timeCalls: boolean;
}

export function clientSpec(i: ClientSpecInput): StreamSpecInput {
  const connect = { host: i.dataHost, port: i.dataPort };
  const bind = i.localPort > 0 || i.localAddress ? { host: i.localAddress ?? (i.family === "ipv6" ? "::" : "0.0.0.0"), port: i.localPort } : undefined;
  // Test-specific -D on a UDP test is accepted and, as in netperf, not applied to the datagram socket.
  const tcp = i.test.startsWith("TCP");
  const noDelay = i.noDelay && tcp;
  const options = socketOptions({ sendBuffer: i.sendBuffer, recvBuffer: i.recvBuffer, noDelay, keepAlive: i.keepAlive && tcp, cork: i.cork && tcp, mss: tcp ? i.mss : undefined, congestion: i.congestion, tos: i.tos });
  const base = { id: 0, options, family: i.family, ...(bind ? { bind } : {}) };
  switch (i.test) {
    case "TCP_STREAM":
      return { kind: "tcp-send", ...base, connect, writeSize: i.sendSize, payload: netperfPayload(i.sendSize), end: "fin-wait-eof", limitBytes: i.count, timeCalls: i.timeCalls };
    case "TCP_MAERTS":
      return { kind: "tcp-recv", ...base, connect, connections: 1, readSize: Math.max(1, i.recvSize), endOnEof: true, timeCalls: i.timeCalls };
    case "UDP_STREAM":
      return { kind: "udp-send", ...base, connect, datagramSize: i.sendSize, payload: netperfPayload(i.sendSize), format: "none", endMarker: "zero-length-x3", timeCalls: i.timeCalls };
    case "TCP_RR":
    case "UDP_RR":
    case "TCP_CRR":
      return {
        kind: "rr-client",
        ...base,
        // CRR picks a fresh local port per connection; an explicit bind would collide with the previous TIME_WAIT.
        ...(i.test === "TCP_CRR" ? { bind: undefined } : {}),
        transport: i.test === "UDP_RR" ? "udp" : "tcp",
        connect,
        requestSize: i.requestSize,
        responseSize: i.responseSize,
        perTransactionConnect: i.test === "TCP_CRR",
        inFlight: i.test === "TCP_CRR" ? 1 : Math.min(1024, 1 + Math.max(0, i.firstBurst)),
        endMarker: i.test === "UDP_RR" ? "zero-length-x3" : "none",
        limitTransactions: i.count,
      };
  }
}

export function clientCounters(i: { test: MigratedTest; requestSize: number; responseSize: number; sendSize: number }, c: StreamCounters, elapsedS: number): ClientDataCounters {
  switch (i.test) {
    case "TCP_STREAM":
      return { elapsedS, bytesSent: c.bytes, bytesReceived: 0, sendCalls: tcpSends(c.bytes, i.sendSize), recvCalls: 0, failedSends: c.sendErrors, transactions: 0 };
    case "UDP_STREAM":
      return { elapsedS, bytesSent: c.bytes, bytesReceived: 0, sendCalls: c.packets, recvCalls: 0, failedSends: c.sendErrors, transactions: 0 };
    case "TCP_MAERTS":
      return { elapsedS, bytesSent: 0, bytesReceived: c.bytes, sendCalls: 0, recvCalls: c.packets, failedSends: 0, transactions: 0 };
    default: {
      const t = c.transactions;
      return { elapsedS, bytesSent: t * i.requestSize, bytesReceived: t * i.responseSize, sendCalls: t, recvCalls: t, failedSends: c.sendErrors, transactions: t };
    }
  }
}

/**
 * netperf's transport_retrans: TCP_INFO's total_retrans of the data socket, or -1 where it has none to read (UDP;
 * TCP_CRR, whose last socket is already closed). The Worker samples it once a second and when it stops a stream.
 */
export function transportRetrans(shape: { protocol: "tcp" | "udp"; connectPerTransaction: boolean }, c: StreamCounters | undefined): number {
  if (shape.protocol !== "tcp" || shape.connectPerTransaction || !c) return -1;
  return c.tcpRetrans;
}
