import { describe, expect, test } from "bun:test";
import { intervalSums, passes, summarySums } from "./report-sums.ts";
import { iv, report, stream } from "./testdata/report-builders.ts";

/** The figures these tests look at: UDP, two streams per direction, senders with retransmit counts. */
const udpReport = (x: Parameters<typeof report>[0]) => report({ protocol: "udp", numStreams: 2, senderHasRetransmits: 1, ...x });

describe("report sums", () => {
  test("directions follow iperf3's walk: bidir client sends first, bidir server receives first", () => {
    expect(passes(udpReport({ role: "client", mode: "bidir", streams: [] }))).toEqual([true, false]);
    expect(passes(udpReport({ role: "server", mode: "bidir", streams: [] }))).toEqual([false, true]);
    expect(passes(udpReport({ role: "server", mode: "sender", streams: [] }))).toEqual([true]);
    expect(passes(udpReport({ role: "client", mode: "receiver", streams: [] }))).toEqual([false]);
  });

  test("an interval sums only its direction's streams; a short one without data is dropped", () => {
    const t = udpReport({
      role: "client", mode: "bidir",
      streams: [
        stream(5, true, [iv(0, 1, 100, { packets: 2, retransmits: 3 }), iv(1, 1.05, 0)]),
        stream(7, false, [iv(0, 1, 40, { packets: 4, lost: 1, jitterS: 0.002 })]),
        stream(9, false, [iv(0, 1, 60, { packets: 6, lost: 2, jitterS: 0.004 })]),
      ],
    });
    const [send, recv] = intervalSums(t, 0)!;
    expect(send).toMatchObject({ mustSend: true, bytes: 100, packets: 2, retransmits: 3, lost: 0 });
    expect(send!.streams.map((s) => s.stream.socket)).toEqual([5]);
    expect(recv).toMatchObject({ mustSend: false, bytes: 100, packets: 10, lost: 3 });
    expect(recv!.jitterS).toBeCloseTo(0.006, 12);
    expect(recv!.streams.map((s) => s.stream.socket)).toEqual([7, 9]);
    expect(intervalSums(t, 1)).toBeUndefined();
  });

  test("the summary takes omitted datagrams out and uses the peer's counts for the side it does not see", () => {
    const t = udpReport({
      role: "server", mode: "bidir", senderHasRetransmits: 1, otherSideHasRetransmits: -1,
      streams: [
        stream(5, true, [], { bytesSent: 1000, bytesReceived: 900, packetCount: 10, peerPacketCount: 9, omittedPacketCount: 1, cntError: 3, omittedCntError: 1, outOfOrder: 2, retransmits: 4 }),
        stream(7, false, [], { bytesSent: 500, bytesReceived: 500, packetCount: 8, peerPacketCount: 0, omittedPacketCount: 0, jitterS: 0.001 }),
      ],
    });
    const [recv, send] = summarySums(t);
    expect(recv).toMatchObject({ mustSend: false, hasRetransmits: -1, sent: 500, received: 500, packets: 8, senderPackets: 0, receiverPackets: 8, lost: 0, jitterS: 0.001 });
    expect(send).toMatchObject({ mustSend: true, hasRetransmits: 1, sent: 1000, received: 900, retransmits: 4, packets: 9, senderPackets: 9, receiverPackets: 8, lost: 2 });
    expect(send!.streams[0]).toMatchObject({ senderPackets: 9, receiverPackets: 8, packets: 9, lost: 2, outOfOrder: 2 });
  });
});
