import { decodeCcResponse, decodeCcResults, encodeCcRequest } from "../../interop/netperf/classic-cc.ts";
import { OmniFlag } from "../../interop/netperf/constants.ts";
import { OmniResponse } from "../../interop/netperf/omni-response.ts";
import { OmniResults } from "../../interop/netperf/omni-results.ts";
import { cpuCount } from "./cpu-stats.ts";
import type { ClientIo } from "./client.ts";
import { classicPhase, classicRequestWords, dataEnds, RESULTS_AFTER_SIGNAL_MS, startClassic } from "./classic-phase.ts";
import { accepted } from "./control-exchange.ts";
import { clientCounters, clientSpec, effectiveBuffers } from "./data-specs.ts";
import { computeFigures } from "./figures.ts";
import { legacyBody } from "./legacy-output.ts";
import type { NetperfPlan } from "./plan.ts";
import { peerName } from "./test-runs.ts";

/**
 * netperf's TCP_CC (send_tcp_cc): the classic DO_TCP_CC set-up, then connections opened and closed as fast as the
 * server accepts and closes them, no byte moved. Every figure is the client's own (transactions over its elapsed
 * time); the results only carry the remote CPU. The stream is an engine connect-per-transaction client with empty
 * requests and responses.
 */
export async function runTcpCc(plan: NetperfPlan, io: ClientIo): Promise<number> {
  const started = await startClassic(plan, io);
  if (typeof started === "number") return started;
  const { control, family } = started;
  try {
    const reply = accepted(io, await control.ask(
      encodeCcRequest({
        recvBufSize: plan.socketBuffers.remote.recv,
        sendBufSize: plan.socketBuffers.remote.send,
        recvAlignment: plan.align.remote.recv,
        recvOffset: plan.offset.remote.recv,
        sendAlignment: plan.align.remote.send,
        sendOffset: plan.offset.remote.send,
        requestSize: plan.requestSize,
        responseSize: plan.responseSize,
        ...classicRequestWords(plan, family),
      }),
    ), 1);
    if (typeof reply === "number") return reply;
    const response = decodeCcResponse(reply);
    const ends = dataEnds(started, response.dataPort);
    const spec = clientSpec({ ...ends, test: "TCP_CRR", sendSize: 1, recvSize: 1, requestSize: 0, responseSize: 0, firstBurst: 0, timeCalls: false });
    const shape = { protocol: "tcp" as const, sends: true, receives: true, connectPerTransaction: true };
    const phase = await classicPhase(spec, plan, io, peerName(ends.dataHost, response.dataPort), shape);
    const interrupted = io.signal.aborted;
    const resultsReply = await control.reply(interrupted ? RESULTS_AFTER_SIGNAL_MS : undefined);
    // Interrupted with the netserver still counting down its padded timer: the figures are the client's own anyway.
    const results = interrupted && !resultsReply ? undefined : accepted(io, resultsReply, 1);
    if (typeof results === "number") return results;
    const remote = results ? decodeCcResults(results) : undefined;
    const remoteCpu = response.measureCpu !== 0 && remote?.cpuUtil !== undefined;
    const local = clientCounters({ test: "TCP_CRR", requestSize: plan.requestSize, responseSize: plan.responseSize, sendSize: 0 }, phase.counters, phase.elapsedS);
    const buffers = effectiveBuffers("tcp", plan.socketBuffers.local.send, plan.socketBuffers.local.recv);
    // Transactions per second whatever -f says, and service demand per transaction (netperf scales the count by 1024
    // for its per-KB formula): the 'x' figures of a request/response test.
    const f = computeFigures({
      test: "TCP_CRR", format: "x", firstBurst: 0, local, localSendSize: 0, localRecvSize: 0,
      sockets: { sendRequested: plan.socketBuffers.local.send, recvRequested: plan.socketBuffers.local.recv, ...buffers, sendEnd: buffers.send, recvEnd: buffers.recv },
      response: OmniResponse.parse({ flags: remoteCpu ? OmniFlag.MEASURE_CPU : 0, sendBufSize: response.sendBufSize, recvBufSize: response.recvBufSize }),
      results: OmniResults.parse({ cpuUtil: remote?.cpuUtil ?? 0, numCpus: remote?.numCpus ?? 0 }),
      localCpu: phase.localCpu, localCpuCount: cpuCount(), latency: undefined,
    });
    io.out(legacyBody({
      test: "TCP_CRR", connectClose: true, f, printHeaders: plan.printHeaders, verbosity: plan.verbosity, brand: undefined,
      localCpu: plan.localCpu, remoteCpu, lss: buffers.send, lsr: buffers.recv, rss: response.sendBufSize, rsr: response.recvBufSize,
      sendSize: 0, remoteSendSize: 0, requestSize: plan.requestSize, responseSize: plan.responseSize,
      localSendCalls: local.sendCalls, localRecvCalls: local.recvCalls, failedSends: local.failedSends, remoteRecvCalls: 0, remoteSendCalls: 0,
      localAlign: plan.align.local, remoteAlign: plan.align.remote, localOffset: plan.offset.local, remoteOffset: plan.offset.remote,
      transportMss: -1, firstBurst: 0,
    }));
    return 0;
  } finally {
    control.close();
  }
}
