import type { ClientRound } from "../../interop/netperf/client-session.ts";
import { testShape } from "../../interop/netperf/test-request.ts";
import { confidenceWarning, type ConfidenceTracker } from "./confidence.ts";
import { defaultCongestion } from "./data-specs.ts";
import type { Figures, LocalSockets } from "./figures.ts";
import { legacyBody } from "./legacy-output.ts";
import { renderOmni } from "./omni-output.ts";
import type { OmniSetup } from "./omni-setup.ts";
import type { NetperfPlan } from "./plan.ts";
import type { SelectorContext } from "./selectors.ts";

/** What an omni test's report is made of: its set-up, its figures (averaged over -i rounds), the last round. */
export interface RoundOutcome {
  setup: OmniSetup;
  /** This side's sockets with their sizes at the end of the last data phase. */
  sockets: LocalSockets;
  f: Figures;
  last: ClientRound;
  iterations: number;
  confidence: ConfidenceTracker | undefined;
  cpus: number;
  dataFamily: "ipv4" | "ipv6";
  localRetrans: number;
  transportMss: number;
  /** This test's UUID where -u gave none. */
  uuid: string;
}

/** The report netperf prints when a test is over: the legacy tables, or the -o/-O/-k selectors. */
export function reportText(plan: NetperfPlan, o: RoundOutcome): string {
  if (plan.output === "legacy") {
    const warning = o.confidence?.missed ? confidenceWarning(o.confidence.widthsPct()) : "";
    return warning + legacyBody({
      test: plan.test,
      f: o.f,
      printHeaders: plan.printHeaders,
      verbosity: plan.verbosity,
      brand: plan.brand,
      localCpu: plan.localCpu,
      remoteCpu: o.f.remoteCpuMeasured,
      lss: o.setup.localSockets.send,
      lsr: o.setup.localSockets.recv,
      rss: o.last.response.sendBufSize,
      rsr: o.last.response.recvBufSize,
      sendSize: o.setup.sendSize,
      remoteSendSize: o.last.response.sendSize,
      requestSize: plan.requestSize,
      responseSize: plan.responseSize,
      localSendCalls: o.last.local.sendCalls,
      localRecvCalls: o.last.local.recvCalls,
      failedSends: o.last.local.failedSends,
      remoteRecvCalls: o.last.results.recvCalls,
      remoteSendCalls: o.last.results.sendCalls,
      localAlign: plan.align.local,
      remoteAlign: plan.align.remote,
      localOffset: plan.offset.local,
      remoteOffset: plan.offset.remote,
      transportMss: o.transportMss,
      firstBurst: plan.firstBurst,
    });
  }
  return renderOmni(plan.output, o.setup.blocks, selectorContext(plan, o), plan.printHeaders);
}

/** Every selector's source for -o/-O/-k. */
function selectorContext(plan: NetperfPlan, o: RoundOutcome): SelectorContext {
  const { f, last } = o;
  return {
    test: plan.test,
    omni: plan.omni,
    f,
    response: last.response,
    results: last.results,
    sockets: o.sockets,
    sendSize: o.setup.sendSize,
    recvSize: o.setup.recvSize,
    // netperf prints the -r sizes of a stream too (-1 where -r gave none).
    requestSize: plan.requestSize,
    responseSize: plan.responseSize,
    remoteSocketBuffers: plan.socketBuffers.remote,
    sendWidth: o.setup.request.sendWidth,
    recvWidth: o.setup.request.recvWidth,
    localSendCalls: last.local.sendCalls,
    localRecvCalls: last.local.recvCalls,
    localAlign: plan.align.local,
    remoteAlign: plan.align.remote,
    localOffset: plan.offset.local,
    remoteOffset: plan.offset.remote,
    firstBurst: plan.firstBurst,
    confidenceLevel: plan.confidenceLevel,
    confidenceIntervalPct: plan.iterationMax > 1 ? plan.confidenceInterval * 100 : -1,
    iterations: o.iterations,
    confidenceWidthsPct: o.confidence?.widthsPct(),
    localCpuBind: plan.cpuAffinity.local,
    remoteCpuBind: plan.cpuAffinity.remote,
    localCpuCount: plan.localCpu ? o.cpus : 0,
    localNoDelay: plan.noDelay,
    cork: plan.cork,
    localSocketPrio: plan.socketPrio.local,
    remoteSocketPrio: plan.socketPrio.remote,
    localSocketTos: plan.socketTos.local,
    remoteSocketTos: plan.socketTos.remote,
    localDataPort: String(plan.localDataPort),
    localDataAddress: plan.localDataAddress ?? (o.dataFamily === "ipv6" ? "::" : "0.0.0.0"),
    localDataFamily: plan.dataFamily === "ipv4" ? 2 : plan.dataFamily === "ipv6" ? 10 : 0,
    remoteDataPort: String(plan.remoteDataPort),
    remoteDataAddress: plan.remoteDataAddress ?? plan.host,
    remoteDataFamily: o.dataFamily === "ipv6" ? 10 : 2,
    localTransportRetrans: o.localRetrans,
    transportMss: o.transportMss,
    localCongestion: testShape(plan.test).protocol === "tcp" ? plan.congestion.local || defaultCongestion() : "",
    remoteCongestion: o.setup.wantCong ? last.results.congControl : "",
    localFillFile: plan.fillFile.local,
    remoteFillFile: plan.fillFile.remote,
    brand: plan.brand,
    uuid: plan.uuid ?? o.uuid,
    commandLine: plan.commandLine,
  };
}
