import { encodeClassicStreamRequest } from "../../interop/netperf/classic-stream.ts";
import { NetFamily } from "../../interop/netperf/constants.ts";
import { DataPlane } from "../../src/engine/data-plane.ts";
import { explainSocketError } from "../../src/errors.ts";
import { WorkerPool } from "../../src/engine/worker-pool.ts";
import type { StreamSpecInput } from "../../src/stream-spec.ts";
import { headerFor, type ClientIo } from "./client.ts";
import { resolveTest } from "./control-connection.ts";
import { openControl, type Control } from "./control-exchange.ts";
import type { ClientSpecInput } from "./data-specs.ts";
import type { NetperfPlan } from "./plan.ts";
import { transportMss } from "./tcp-info-dump.ts";
import { runDataPhase, type PhaseEnd, type PhaseShape } from "./test-runs.ts";

/**
 * The tests netperf 2.7.0 still runs with its classic messages (TCP_MSS, TCP_CC, TCP_SENDFILE): the control
 * connection and top header they share, and their data phase (runDataPhase, as omni's).
 */

export interface ClassicStart {
  control: Control;
  /** The plan with its data names resolved. */
  plan: NetperfPlan;
  /** The control host, resolved. */
  ip: string;
  family: "ipv4" | "ipv6";
}

/** Resolves, connects and prints the header; or prints why not, as netperf does, and gives its exit status. */
export async function startClassic(asked: NetperfPlan, io: ClientIo): Promise<ClassicStart | number> {
  const r = await resolveTest(asked);
  if ("failure" in r) {
    io.out(r.failure);
    return 255;
  }
  const { plan, ip, dataFamily: family } = r;
  WorkerPool.shared();
  const control = await openControl(io, plan, ip);
  if (typeof control === "number") return control;
  if (plan.printHeaders) io.out(headerFor(plan, ip, family));
  return { control, plan, ip, family };
}

/** After a signal ended the data phase: how long the netserver has to send its results (TCP_CC's timer runs 4 s on). */
export const RESULTS_AFTER_SIGNAL_MS = 2_000;

/** The data connection's part of clientSpec's input, from the plan and the port the netserver gave. */
export function dataEnds({ plan, ip, family }: ClassicStart, dataPort: number): Pick<ClientSpecInput, "dataHost" | "dataPort" | "family" | "localAddress" | "localPort" | "sendBuffer" | "recvBuffer" | "noDelay" | "cork" | "congestion" | "count"> {
  return {
    dataHost: plan.remoteDataAddress ?? ip,
    dataPort,
    family,
    localAddress: plan.localDataAddress,
    localPort: plan.localDataPort,
    sendBuffer: plan.socketBuffers.local.send > 0 ? plan.socketBuffers.local.send : undefined,
    recvBuffer: plan.socketBuffers.local.recv > 0 ? plan.socketBuffers.local.recv : undefined,
    noDelay: plan.noDelay,
    // scan_sockets_args' -C: netperf's create_data_socket corks the data socket of every classic test.
    cork: plan.cork,
    congestion: plan.congestion.local || undefined,
    count: plan.testLength < 0 ? -plan.testLength : 0,
  };
}

export interface ClassicPhase extends PhaseEnd {
  /** The data connection's segment size (TCP_INFO as the Worker last read it), -1 without one. */
  transportMss: number;
}

/** Opens `spec` and runs it as netperf's data phase (runDataPhase), as a Test the status endpoint shows. */
export async function classicPhase(spec: StreamSpecInput, plan: NetperfPlan, io: ClientIo, peer: string, shape: PhaseShape): Promise<ClassicPhase> {
  const plane = await DataPlane.open([spec]).catch((e: unknown) => {
    const at = spec.kind === "tcp-send" && spec.connect ? spec.connect : { host: peer, port: 0 };
    throw explainSocketError(e, { ...at, role: "connect" });
  });
  const phase = await runDataPhase(plane, { plan, signal: io.signal, peer, shape, openedAtMs: performance.now() });
  return { ...phase, transportMss: transportMss("tcp", plane.lastTcpInfo(0)) };
}

/** The words every classic request carries the same way: options, the test's length, the data port, the family. */
export function classicRequestWords(plan: NetperfPlan, family: "ipv4" | "ipv6") {
  return {
    noDelay: plan.noDelay ? 1 : 0,
    measureCpu: plan.remoteCpu ? 1 : 0,
    cpuRate: plan.remoteCpuRate,
    testLength: plan.testLength,
    port: plan.remoteDataPort,
    ipFamily: family === "ipv6" ? NetFamily.INET6 : NetFamily.INET,
  };
}

/** DO_TCP_STREAM as send_tcp_mss and sendfile_tcp_stream fill it. */
export function classicStreamRequest(plan: NetperfPlan, family: "ipv4" | "ipv6"): Uint8Array {
  return encodeClassicStreamRequest({
    sendBufSize: plan.socketBuffers.remote.send,
    recvBufSize: plan.socketBuffers.remote.recv,
    receiveSize: Math.max(0, plan.remoteRecvSize),
    recvAlignment: plan.align.remote.recv,
    recvOffset: plan.offset.remote.recv,
    ...classicRequestWords(plan, family),
  });
}

/**
 * netperf -t UUID: the control connection, then the test's UUID (-- -u, or a fresh one) with no newline, for
 * scripts; no header, no test.
 */
export async function printUuid(plan: NetperfPlan, io: ClientIo): Promise<number> {
  const started = await startClassic({ ...plan, printHeaders: false }, io);
  if (typeof started === "number") return started;
  io.out(plan.uuid ?? crypto.randomUUID());
  started.control.close();
  return 0;
}
