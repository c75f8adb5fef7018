import { closeSync, openSync, readSync, statSync } from "node:fs";
import { decodeClassicStreamResponse, decodeClassicStreamResults } from "../../interop/netperf/classic-stream.ts";
import { OmniFlag } from "../../interop/netperf/constants.ts";
import { OmniResponse } from "../../interop/netperf/omni-response.ts";
import { OmniResults } from "../../interop/netperf/omni-results.ts";
import { cpuCount } from "./cpu-stats.ts";
import type { ClientIo } from "./client.ts";
import { classicPhase, classicStreamRequest, dataEnds, RESULTS_AFTER_SIGNAL_MS, startClassic } from "./classic-phase.ts";
import { accepted } from "./control-exchange.ts";
import { clientCounters, clientSpec, effectiveBuffers, netperfPayload } from "./data-specs.ts";
import { computeFigures } from "./figures.ts";
import { legacyBody } from "./legacy-output.ts";
import type { NetperfPlan } from "./plan.ts";
import { peerName } from "./test-runs.ts";

/** perror's words for what open() says most often. */
const OPEN_ERRORS: Record<string, string> = { ENOENT: "No such file or directory", EACCES: "Permission denied", EISDIR: "Is a directory", ELOOP: "Too many levels of symbolic links" };

/**
 * What each send writes. netperf sendfile()s successive send-size pieces of the -F file (or of a temporary file of
 * random data) and needs the file to hold its whole ring; Bun has no sendfile, so we send the file's first piece
 * from memory, each time (the netperf pattern without -F). Undefined, and netperf's complaint printed, when the
 * file cannot serve.
 */
function filePayload(path: string, sendSize: number, width: number, io: ClientIo): Uint8Array<ArrayBuffer> | undefined {
  if (path === "") return netperfPayload(sendSize);
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (e) {
    const code = (e as { code?: string }).code ?? "";
    io.err(`alloc_sendfile_buf_ring: Could not open requested file: ${OPEN_ERRORS[code] ?? code}\n`);
    return undefined;
  }
  try {
    if (statSync(path).size < width * sendSize) {
      io.err("alloc_sendfile_buf_ring: specified file too small.\nfile must be larger than send_width * send_size\n");
      return undefined;
    }
    const buf = new Uint8Array(sendSize);
    readSync(fd, buf, 0, sendSize, 0);
    return buf;
  } finally {
    closeSync(fd);
  }
}

/**
 * netperf's TCP_SENDFILE (sendfile_tcp_stream): the classic DO_TCP_STREAM set-up, a TCP stream of the fill file's
 * bytes, FIN, the server's FIN, and the classic stream table; throughput from the bytes the server received over
 * the client's elapsed time.
 */
export async function runTcpSendfile(plan: NetperfPlan, io: ClientIo): Promise<number> {
  const buffers = effectiveBuffers("tcp", plan.socketBuffers.local.send, plan.socketBuffers.local.recv);
  const sendSize = plan.localSendSize > 0 ? plan.localSendSize : buffers.send > 0 ? buffers.send : 4096;
  const width = plan.sendWidth > 0 ? plan.sendWidth : Math.max(2, Math.floor(buffers.send / sendSize) + 1);
  const started = await startClassic(plan, io);
  if (typeof started === "number") return started;
  const { control, family } = started;
  try {
    const payload = filePayload(plan.fillFile.local, sendSize, width, io);
    if (!payload) return 1;
    const reply = accepted(io, await control.ask(classicStreamRequest(plan, family)), 1);
    if (typeof reply === "number") return reply;
    const response = decodeClassicStreamResponse(reply);
    const ends = dataEnds(started, response.dataPort);
    const spec = { ...clientSpec({ ...ends, test: "TCP_STREAM", sendSize, recvSize: 1, requestSize: 0, responseSize: 0, firstBurst: 0, timeCalls: false }), payload };
    const shape = { protocol: "tcp" as const, sends: true, receives: false, connectPerTransaction: false };
    const phase = await classicPhase(spec, plan, io, peerName(ends.dataHost, response.dataPort), shape);
    const results = accepted(io, await control.reply(io.signal.aborted ? RESULTS_AFTER_SIGNAL_MS : undefined), 1);
    if (typeof results === "number") return results;
    const remote = decodeClassicStreamResults(results);
    const remoteCpu = response.measureCpu !== 0;
    const local = clientCounters({ test: "TCP_STREAM", requestSize: 0, responseSize: 0, sendSize }, phase.counters, phase.elapsedS);
    const f = computeFigures({
      test: "TCP_STREAM", format: plan.format, firstBurst: 0, local, localSendSize: sendSize, localRecvSize: 0,
      sockets: { sendRequested: plan.socketBuffers.local.send, recvRequested: plan.socketBuffers.local.recv, ...buffers, sendEnd: buffers.send, recvEnd: buffers.recv },
      response: OmniResponse.parse({ flags: remoteCpu ? OmniFlag.MEASURE_CPU : 0, sendBufSize: response.sendBufSize, recvBufSize: response.recvBufSize }),
      results: OmniResults.parse({ bytesReceived: remote.bytesReceived, recvCalls: remote.recvCalls, cpuUtil: remote.cpuUtil, cpuMethod: remote.cpuMethod, numCpus: remote.numCpus }),
      localCpu: phase.localCpu, localCpuCount: cpuCount(), latency: undefined,
    });
    io.out(legacyBody({
      test: "TCP_STREAM", sendfile: true, f, printHeaders: plan.printHeaders, verbosity: plan.verbosity, brand: plan.brand,
      localCpu: plan.localCpu, remoteCpu, lss: buffers.send, lsr: buffers.recv, rss: response.sendBufSize, rsr: response.recvBufSize,
      sendSize, remoteSendSize: 0, requestSize: 0, responseSize: 0,
      localSendCalls: local.sendCalls, localRecvCalls: 0, failedSends: local.failedSends, remoteRecvCalls: remote.recvCalls, remoteSendCalls: 0,
      localAlign: plan.align.local, remoteAlign: plan.align.remote, localOffset: plan.offset.local, remoteOffset: plan.offset.remote,
      transportMss: phase.transportMss, firstBurst: 0,
    }));
    return 0;
  } finally {
    control.close();
  }
}
