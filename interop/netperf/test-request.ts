import { z } from "zod";
import { Direction, IpProto, NetFamily, NetSocketType, OmniFlag } from "./constants.ts";
import type { OmniRequestInput } from "./omni-request.ts";

/**
 * How stock netperf 2.7.0 fills DO_OMNI for the migrated classic tests (docs/protocols/netperf.md §3.2, §12): direction
 * from the server's view, flags, ring widths derived from the client's own socket buffers, -1 for "server chooses".
 */

export const MigratedTest = z.enum(["TCP_STREAM", "TCP_MAERTS", "UDP_STREAM", "TCP_RR", "TCP_CRR", "UDP_RR"]);
export type MigratedTest = z.infer<typeof MigratedTest>;

export interface TestShape {
  protocol: "tcp" | "udp";
  /** Direction bits from the client's view. */
  clientSends: boolean;
  clientReceives: boolean;
  connectPerTransaction: boolean;
}

export function testShape(test: MigratedTest): TestShape {
  switch (test) {
    case "TCP_STREAM":
      return { protocol: "tcp", clientSends: true, clientReceives: false, connectPerTransaction: false };
    case "TCP_MAERTS":
      return { protocol: "tcp", clientSends: false, clientReceives: true, connectPerTransaction: false };
    case "UDP_STREAM":
      return { protocol: "udp", clientSends: true, clientReceives: false, connectPerTransaction: false };
    case "TCP_RR":
      return { protocol: "tcp", clientSends: true, clientReceives: true, connectPerTransaction: false };
    case "TCP_CRR":
      return { protocol: "tcp", clientSends: true, clientReceives: true, connectPerTransaction: true };
    case "UDP_RR":
      return { protocol: "udp", clientSends: true, clientReceives: true, connectPerTransaction: false };
  }
}

/** netperf's name for a test's direction (DIRECTION selector, the OMNI title), from the client's view. */
export function directionName(test: MigratedTest): string {
  const s = testShape(test);
  if (s.clientReceives && !s.clientSends) return "Receive";
  if (s.clientSends && !s.clientReceives) return "Send";
  return s.connectPerTransaction ? "Connect|Send|Recv" : "Send|Recv";
}

export function isRequestResponse(test: MigratedTest): boolean {
  const s = testShape(test);
  return s.clientSends && s.clientReceives;
}

export const TestRequestParams = z.object({
  test: MigratedTest,
  /** > 0 seconds, < 0 = -(transactions or bytes), 0 = until stopped. */
  testLength: z.number().int(),
  family: z.enum(["ipv4", "ipv6"]).default("ipv4"),
  /** Request/response sizes (-r); RR tests default to 1. */
  requestSize: z.number().int().default(-1),
  responseSize: z.number().int().default(-1),
  /** The client's own send/receive size (-m local, -M ,local); 0 = choose from the socket buffer. */
  localSendSize: z.number().int().min(0).default(0),
  localRecvSize: z.number().int().min(0).default(0),
  /** The client's data socket buffers at creation (for the ring widths netperf reports to the server). */
  localSendBuf: z.number().int(),
  localRecvBuf: z.number().int(),
  /** Global -W send,recv; 0 = derive. */
  sendWidth: z.number().int().min(0).default(0),
  recvWidth: z.number().int().min(0).default(0),
  remoteSendSize: z.number().int().default(-1),
  remoteRecvSize: z.number().int().default(-1),
  remoteSendBuf: z.number().int().default(-1),
  remoteRecvBuf: z.number().int().default(-1),
  remoteSendAlign: z.number().int().default(8),
  remoteRecvAlign: z.number().int().default(8),
  remoteSendOffset: z.number().int().default(0),
  remoteRecvOffset: z.number().int().default(0),
  remoteCpuAffinity: z.number().int().default(-1),
  remoteNoDelay: z.boolean().default(false),
  measureRemoteCpu: z.boolean().default(false),
  remoteCpuRate: z.number().default(0),
  /** -R; undefined = netperf's default (off for UDP_STREAM, on otherwise). */
  routingAllowed: z.boolean().optional(),
  /** REMOTE_CONG_CONTROL selected: same bit as routing (docs/protocols/netperf.md §3.1). */
  wantRemoteCongestion: z.boolean().default(false),
  keepAlive: z.boolean().default(false),
  remoteCongestion: z.string().max(15).default(""),
  remoteFillFile: z.string().max(31).default(""),
  remoteSocketPrio: z.number().int().default(-1),
  remoteSocketTos: z.number().int().default(-1),
  remoteIntervalBurst: z.number().int().min(0).default(0),
  remoteIntervalUsecs: z.number().int().min(0).default(0),
  remoteCopyAvoidance: z.boolean().default(false),
  useSendfile: z.boolean().default(false),
  fastOpen: z.boolean().default(false),
  usePktinfo: z.boolean().default(false),
  deferAccept: z.boolean().default(false),
  /** Port asked of the server (-P ,N) and the client's bound data port. */
  remoteDataPort: z.number().int().min(0).max(65535).default(0),
  localDataPort: z.number().int().min(0).max(65535).default(0),
  /** The client's data address as bound, and test -H when given explicitly. */
  localDataAddress: z.string().optional(),
  explicitRemoteDataAddress: z.string().optional(),
});
export type TestRequestParams = z.infer<typeof TestRequestParams>;
export type TestRequestParamsInput = z.input<typeof TestRequestParams>;

/** The client's own I/O sizes that go with the request. */
export interface LocalIo {
  /** The send and receive sizes netperf reports (LOCAL_SEND_SIZE, LOCAL_RECV_SIZE). */
  sendSize: number;
  recvSize: number;
  /** The bytes of each send and receive call: a stream given -r sizes moves them, whatever it reports. */
  sendCall: number;
  recvCall: number;
}

const UDP_MAX = 65507;

export function chooseSendSize(socketBuffer: number, protocol: "tcp" | "udp"): number {
  if (socketBuffer <= 0) return 4096;
  return protocol === "udp" ? Math.min(socketBuffer, UDP_MAX) : socketBuffer;
}

export function buildOmniRequest(input: TestRequestParamsInput): { request: OmniRequestInput; local: LocalIo } {
  const p = TestRequestParams.parse(input);
  const shape = testShape(p.test);
  const rr = shape.clientSends && shape.clientReceives;
  const requestSize = rr ? (p.requestSize > 0 ? p.requestSize : 1) : p.requestSize;
  const responseSize = rr ? (p.responseSize > 0 ? p.responseSize : 1) : p.responseSize;

  let sendWidth = p.sendWidth;
  let recvWidth = p.recvWidth;
  let sendSize = p.localSendSize;
  let recvSize = p.localRecvSize;
  let sendCall = sendSize;
  let recvCall = recvSize;
  if (shape.clientSends) {
    if (rr) {
      if (sendWidth === 0) sendWidth = 1;
      sendSize = sendCall = requestSize;
    } else {
      // netperf 2.7.0 sends the -r request size per call in a stream too, and then works out no default send size.
      if (requestSize > 0) sendCall = requestSize;
      else sendCall = sendSize = sendSize === 0 ? chooseSendSize(p.localSendBuf, shape.protocol) : sendSize;
      if (sendWidth === 0) sendWidth = Math.floor(p.localSendBuf / sendCall) + 1;
      // netperf bumps a width of 1 even when the user asked for it.
      if (sendWidth === 1) sendWidth = 2;
    }
  }
  if (shape.clientReceives) {
    if (rr) {
      if (recvWidth === 0) recvWidth = 1;
      recvSize = recvCall = responseSize;
    } else {
      // As for sending: a stream given a -r response size receives that much per call.
      if (responseSize > 0) recvCall = responseSize;
      else recvCall = recvSize = recvSize === 0 ? (p.localRecvBuf > 0 ? p.localRecvBuf : 4096) : recvSize;
      if (recvWidth === 0) {
        recvWidth = Math.floor(p.localRecvBuf / recvCall) + 1;
        if (recvWidth === 1) recvWidth = 2;
      }
    }
  }

  const routing = p.routingAllowed ?? !(shape.protocol === "udp" && !rr);
  let flags = 0;
  if (p.remoteNoDelay) flags |= OmniFlag.NO_DELAY;
  if (p.useSendfile) flags |= OmniFlag.USE_SENDFILE;
  if (shape.connectPerTransaction) flags |= OmniFlag.CONNECT_TEST;
  if (p.measureRemoteCpu) flags |= OmniFlag.MEASURE_CPU;
  if (routing || p.wantRemoteCongestion) flags |= OmniFlag.ROUTING_ALLOWED;
  if (p.fastOpen) flags |= OmniFlag.FASTOPEN;
  if (p.usePktinfo) flags |= OmniFlag.USE_PKTINFO;
  if (p.deferAccept) flags |= OmniFlag.WANT_DEFER_ACCEPT;
  if (p.keepAlive) flags |= OmniFlag.WANT_KEEPALIVE;

  let direction = 0;
  if (shape.clientSends) direction |= Direction.RECV;
  if (shape.clientReceives) direction |= Direction.XMIT;

  const wildcard = p.family === "ipv6" ? "::" : "0.0.0.0";
  const request: OmniRequestInput = {
    cpuAffinity: p.remoteCpuAffinity,
    sendBufSize: p.remoteSendBuf,
    sendSize: p.remoteSendSize,
    sendAlignment: p.remoteSendAlign >>> 0,
    sendOffset: p.remoteSendOffset >>> 0,
    sendWidth: sendWidth >>> 0,
    requestSize,
    recvBufSize: p.remoteRecvBuf,
    receiveSize: p.remoteRecvSize,
    recvAlignment: p.remoteRecvAlign >>> 0,
    recvOffset: p.remoteRecvOffset >>> 0,
    recvWidth: recvWidth >>> 0,
    responseSize,
    flags: flags >>> 0,
    cpuRate: p.remoteCpuRate,
    testLength: p.testLength,
    soRcvAvoid: p.remoteCopyAvoidance ? 1 : 0,
    soSndAvoid: p.remoteCopyAvoidance ? 1 : 0,
    sendDirtyCount: -1,
    recvDirtyCount: -1,
    recvCleanCount: -1,
    dataPort: p.remoteDataPort,
    ipFamily: p.family === "ipv6" ? NetFamily.INET6 : NetFamily.INET,
    socketType: shape.protocol === "udp" ? NetSocketType.DGRAM : NetSocketType.STREAM,
    protocol: shape.protocol === "udp" ? IpProto.UDP : IpProto.TCP,
    direction,
    netperfPort: p.localDataPort,
    intervalBurst: p.remoteIntervalBurst,
    intervalUsecs: p.remoteIntervalUsecs,
    netperfIp: p.localDataAddress ?? wildcard,
    netserverIp: p.explicitRemoteDataAddress ?? wildcard,
    socketPrio: p.remoteSocketPrio,
    socketTos: p.remoteSocketTos,
    congControl: p.remoteCongestion,
    fillFile: p.remoteFillFile,
  };
  return { request, local: { sendSize, recvSize, sendCall, recvCall } };
}
