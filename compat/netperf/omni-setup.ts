import { OmniRequest } from "../../interop/netperf/omni-request.ts";
import { buildOmniRequest, isRequestResponse, testShape } from "../../interop/netperf/test-request.ts";
import type { SocketBufferSizes } from "../../src/worker/messages.ts";
import { effectiveBuffers } from "./data-specs.ts";
import type { LocalSockets } from "./figures.ts";
import { resolveSelection } from "./omni-output.ts";
import type { NetperfPlan } from "./plan.ts";
import type { Selector } from "./selectors.ts";

/**
 * What an omni test is set up with, worked out once from the plan: the request, this side's sockets and sizes, the
 * output selection.
 */
export interface OmniSetup {
  request: OmniRequest;
  localSockets: LocalSockets;
  /** The I/O sizes netperf reports (0 for request/response tests). */
  sendSize: number;
  recvSize: number;
  /** The bytes each send and receive call moves. */
  sendCall: number;
  recvCall: number;
  /** The -o/-O/-k selectors, in their output lines; none for the legacy output. */
  blocks: Selector[][];
  /** REMOTE_CONG_CONTROL is asked for: the request asks the netserver for it. */
  wantCong: boolean;
}

export function omniSetup(plan: NetperfPlan, dataFamily: "ipv4" | "ipv6"): OmniSetup {
  const shape = testShape(plan.test);
  const buffers = effectiveBuffers(shape.protocol, plan.socketBuffers.local.send, plan.socketBuffers.local.recv);
  const localSockets: LocalSockets = {
    sendRequested: plan.socketBuffers.local.send,
    recvRequested: plan.socketBuffers.local.recv,
    send: buffers.send,
    recv: buffers.recv,
    sendEnd: buffers.send,
    recvEnd: buffers.recv,
  };
  const blocks = plan.output === "legacy" ? [] : resolveSelection(plan.outputSelection, plan.test, plan.localCpu || plan.remoteCpu);
  const wantCong = blocks.flat().some((s) => s.name === "REMOTE_CONG_CONTROL");
  const built = buildOmniRequest({
    test: plan.test,
    testLength: plan.testLength,
    family: dataFamily,
    requestSize: plan.requestSize,
    responseSize: plan.responseSize,
    localSendSize: plan.localSendSize,
    localRecvSize: plan.localRecvSize,
    localSendBuf: buffers.send,
    localRecvBuf: buffers.recv,
    sendWidth: plan.sendWidth,
    recvWidth: plan.recvWidth,
    remoteSendSize: plan.remoteSendSize,
    remoteRecvSize: plan.remoteRecvSize,
    remoteSendBuf: plan.socketBuffers.remote.send,
    remoteRecvBuf: plan.socketBuffers.remote.recv,
    remoteSendAlign: plan.align.remote.send,
    remoteRecvAlign: plan.align.remote.recv,
    remoteSendOffset: plan.offset.remote.send,
    remoteRecvOffset: plan.offset.remote.recv,
    remoteCpuAffinity: plan.cpuAffinity.remote,
    remoteNoDelay: plan.noDelay,
    measureRemoteCpu: plan.remoteCpu,
    remoteCpuRate: plan.remoteCpuRate,
    routingAllowed: plan.routingAllowed,
    wantRemoteCongestion: wantCong,
    keepAlive: plan.keepAlive,
    remoteCongestion: plan.congestion.remote,
    remoteFillFile: plan.fillFile.remote,
    remoteSocketPrio: plan.socketPrio.remote,
    remoteSocketTos: plan.socketTos.remote,
    useSendfile: plan.useSendfile,
    fastOpen: plan.fastOpen,
    usePktinfo: plan.pktinfo,
    deferAccept: plan.deferAccept,
    remoteDataPort: plan.remoteDataPort,
    localDataPort: plan.localDataPort,
    localDataAddress: plan.localDataAddress,
    explicitRemoteDataAddress: plan.remoteDataAddress,
  });
  const request = OmniRequest.parse(built.request);
  // netperf reports 0 for the I/O sizes of RR tests.
  const rr = isRequestResponse(plan.test);
  const { sendCall, recvCall } = built.local;
  return { request, localSockets, sendSize: rr ? 0 : built.local.sendSize, recvSize: rr ? 0 : built.local.recvSize, sendCall, recvCall, blocks, wantCong };
}

/** This side's sockets once the data phase read their final sizes (the set-up's where it read none, as for UDP). */
export function socketsAtEnd(s: LocalSockets, end: SocketBufferSizes | undefined): LocalSockets {
  return end ? { ...s, sendEnd: end.send, recvEnd: end.recv } : s;
}
