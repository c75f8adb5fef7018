import { Direction, IpProto, NetFamily, NetSocketType, OmniFlag } from "./constants.ts";
import { Errno } from "../../lib/errno.ts";
import type { ServerDataSetup } from "./data-setup.ts";
import { isUnspecified } from "./ip-words.ts";
import type { OmniRequest } from "./omni-request.ts";

/** Limits a server applies to a DO_OMNI request before it allocates anything for it. */
export interface RequestLimits {
  /** Families the server serves (netserver -4 / -6). */
  families: "any" | "ipv4" | "ipv6";
  /** Largest request or response of a request/response test. */
  maxTransactionSize: number;
  /** Largest stream send or receive size. */
  maxStreamIo: number;
  /** Largest socket buffer a client may ask for. */
  maxSocketBuffer: number;
  cpuMeasurable: boolean;
  /** Untimed tests get this idle guard instead of a timer. */
  idleDataTimeoutMs: number;
}

export const DEFAULT_LIMITS: RequestLimits = {
  families: "any",
  maxTransactionSize: 1 << 20,
  maxStreamIo: 64 * 1024 * 1024,
  maxSocketBuffer: 1 << 30,
  cpuMeasurable: false,
  idleDataTimeoutMs: 30_000,
};

export type RequestCheck = { ok: true; setup: ServerDataSetup } | { ok: false; errno: number; reason: string };

const UDP_MAX = 65507;

/**
 * Turns a decoded DO_OMNI into what the glue must build, or the errno to answer with. Every size is bounded here,
 * so a hostile request cannot make the server allocate or promise more than the limits
 * (docs/protocols/netperf.md §6.1, §9).
 */
export function checkOmniRequest(req: OmniRequest, limits: RequestLimits): RequestCheck {
  const fail = (errno: number, reason: string): RequestCheck => ({ ok: false, errno, reason });

  let family: "ipv4" | "ipv6";
  if (req.ipFamily === NetFamily.INET6) family = "ipv6";
  else if (req.ipFamily === NetFamily.INET || req.ipFamily === NetFamily.UNSPEC) family = "ipv4";
  else return fail(Errno.EAFNOSUPPORT, `address family code ${req.ipFamily} is not served`);
  if (limits.families !== "any" && limits.families !== family) {
    return fail(Errno.EAFNOSUPPORT, `this server serves only ${limits.families}`);
  }

  let protocol: "tcp" | "udp";
  if (req.socketType === NetSocketType.STREAM && (req.protocol === IpProto.TCP || req.protocol === 0)) protocol = "tcp";
  else if (req.socketType === NetSocketType.DGRAM && (req.protocol === IpProto.UDP || req.protocol === 0)) protocol = "udp";
  else return fail(Errno.EPROTONOSUPPORT, `socket type ${req.socketType} / protocol ${req.protocol} not supported`);

  const serverReceives = (req.direction & Direction.RECV) !== 0;
  const serverSends = (req.direction & Direction.XMIT) !== 0;
  if (!serverReceives && !serverSends) return fail(Errno.EINVAL, "direction names neither send nor receive");
  const rr = serverReceives && serverSends;
  const connectPerTransaction = (req.flags & OmniFlag.CONNECT_TEST) !== 0;
  if (connectPerTransaction && (protocol !== "tcp" || !rr)) {
    return fail(Errno.EINVAL, "connect tests need TCP request/response");
  }
  if (rr) {
    for (const [name, size] of [
      ["request", req.requestSize],
      ["response", req.responseSize],
    ] as const) {
      if (size < 1 || size > limits.maxTransactionSize) {
        return fail(Errno.EINVAL, `${name} size ${size} outside 1..${limits.maxTransactionSize}`);
      }
    }
  } else {
    const ioMax = protocol === "udp" ? UDP_MAX : limits.maxStreamIo;
    if (serverReceives && req.receiveSize !== -1 && (req.receiveSize < 1 || req.receiveSize > limits.maxStreamIo)) {
      return fail(Errno.EINVAL, `receive size ${req.receiveSize} outside 1..${limits.maxStreamIo}`);
    }
    if (serverSends && req.sendSize !== -1 && (req.sendSize < 1 || req.sendSize > ioMax)) {
      return fail(Errno.EINVAL, `send size ${req.sendSize} outside 1..${ioMax}`);
    }
  }
  for (const [name, size] of [
    ["send", req.sendBufSize],
    ["receive", req.recvBufSize],
  ] as const) {
    if (size > limits.maxSocketBuffer) return fail(Errno.EINVAL, `${name} buffer ${size} above ${limits.maxSocketBuffer}`);
  }
  if (req.dataPort > 65535 || req.netperfPort > 65535) return fail(Errno.EINVAL, "port number above 65535");

  const wildcard = family === "ipv6" ? "::" : "0.0.0.0";
  const bindAddress = isUnspecified(req.netserverIp) ? wildcard : req.netserverIp;
  const setup: ServerDataSetup = {
    protocol,
    family,
    bindAddress,
    port: req.dataPort,
    serverReceives,
    serverSends,
    connectPerTransaction,
    requestSize: rr ? req.requestSize : -1,
    responseSize: rr ? req.responseSize : -1,
    noDelay: (req.flags & OmniFlag.NO_DELAY) !== 0,
    keepAlive: (req.flags & OmniFlag.WANT_KEEPALIVE) !== 0,
    peer: { address: req.netperfIp, port: req.netperfPort },
    measureCpu: limits.cpuMeasurable && (req.flags & OmniFlag.MEASURE_CPU) !== 0,
    wantCongestionName: protocol === "tcp" && (req.flags & OmniFlag.ROUTING_ALLOWED) !== 0,
    testLengthS: req.testLength > 0 ? req.testLength : 0,
    limitBytes: !rr && req.testLength < 0 ? -req.testLength : 0,
    limitTransactions: rr && req.testLength < 0 ? -req.testLength : 0,
    idleTimeoutMs: req.testLength > 0 ? 0 : limits.idleDataTimeoutMs,
  };
  // netserver sets a buffer for any size >= 0; 0 asks the kernel for its minimum, which we leave to the default.
  if (req.sendBufSize > 0) setup.sendBuffer = req.sendBufSize;
  if (req.recvBufSize > 0) setup.recvBuffer = req.recvBufSize;
  if (req.congControl !== "") setup.congestion = req.congControl;
  if (req.socketTos > 0) setup.tos = Math.min(req.socketTos, 255);
  if (req.socketPrio >= 0) setup.priority = req.socketPrio;
  return { ok: true, setup };
}
