/** Report-model values for the report tests: every figure zero unless the test names it. */
import type { IntervalResult, ReportStream, ReportTest } from "../report-model.ts";

export function iv(startS: number, endS: number, bytes: number, x: Partial<IntervalResult> = {}): IntervalResult {
  return {
    startS, endS, durationS: endS - startS, bytes, omitted: false, retransmits: 0, sndCwnd: 0, sndWnd: 0, rttUs: 0, rttvarUs: 0, pmtu: 0,
    packets: 0, lost: 0, outOfOrder: 0, jitterS: 0, ...x,
  };
}

export function stream(socket: number, sender: boolean, intervals: IntervalResult[], x: Partial<ReportStream> = {}): ReportStream {
  return {
    id: 1, socket, sender, localHost: "127.0.0.1", localPort: 0, remoteHost: "127.0.0.1", remotePort: 0, intervals, bytesSent: 0, bytesReceived: 0,
    packetCount: 0, peerPacketCount: 0, omittedPacketCount: 0, cntError: 0, omittedCntError: 0, outOfOrder: 0, omittedOutOfOrder: 0, jitterS: 0,
    retransmits: 0, maxSndCwnd: 0, maxSndWnd: 0, maxRttUs: 0, minRttUs: 0, meanRttUs: 0, endTimeS: 0, peerTimeS: 0, ...x,
  };
}

/** A one-stream TCP test without retransmit figures, unless `x` says otherwise. */
export function report(x: Partial<ReportTest> & Pick<ReportTest, "role" | "mode" | "streams">): ReportTest {
  return {
    protocol: "tcp", numStreams: 1, unitFormat: "a", statsIntervalS: 1, verbose: false, senderHasRetransmits: 0, otherSideHasRetransmits: 0,
    cpu: [0, 0, 0], remoteCpu: [0, 0, 0], getServerOutput: false, ...x,
  };
}
