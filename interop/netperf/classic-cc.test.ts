import { describe, expect, test } from "bun:test";
import { decodeCcRequest, decodeCcResponse, decodeCcResults, encodeCcRequest, encodeCcResponse, encodeCcResults } from "./classic-cc.ts";
import { MsgType } from "./constants.ts";
import { MESSAGE_SIZE } from "./words.ts";

const word = (b: Uint8Array, off: number, little = false) => new DataView(b.buffer, b.byteOffset).getUint32(off, little);

describe("TCP_CC messages", () => {
  test("DO_TCP_CC carries the test length, sizes and family at send_tcp_cc's offsets", () => {
    const b = encodeCcRequest({ requestSize: 5, responseSize: 7, testLength: 2, ipFamily: 4, port: 1234, measureCpu: 1, cpuRate: 100 });
    expect(b.length).toBe(MESSAGE_SIZE);
    expect(word(b, 0)).toBe(MsgType.DO_TCP_CC);
    expect([word(b, 32), word(b, 36), word(b, 52), word(b, 64), word(b, 68)]).toEqual([5, 7, 2, 1234, 4]);
    const back = decodeCcRequest(b);
    expect(back).toMatchObject({ requestSize: 5, responseSize: 7, testLength: 2, port: 1234, ipFamily: 4, measureCpu: 1, cpuRate: 100, recvBufSize: -1 });
  });

  test("a count test travels as -(transactions)", () => {
    expect(decodeCcRequest(encodeCcRequest({ testLength: -500 })).testLength).toBe(-500);
  });

  test("the response names the data port after the buffer sizes", () => {
    const b = encodeCcResponse({ recvBufSize: 131072, sendBufSize: 16384, dataPort: 40000 });
    expect(word(b, 0)).toBe(MsgType.TCP_CC_RESPONSE);
    expect([word(b, 8), word(b, 24), word(b, 28)]).toEqual([131072, 16384, 40000]);
    expect(decodeCcResponse(b)).toMatchObject({ servErrno: 0, recvBufSize: 131072, sendBufSize: 16384, dataPort: 40000, testLength: 0 });
  });

  test("results: the fields set go out in network order, the response's left-overs byte-swapped, as netserver sends them", () => {
    const response = encodeCcResponse({ recvBufSize: 131072, noDelay: 1, sendBufSize: 16384, dataPort: 40000 });
    const b = encodeCcResults(response, { bytesReceived: 2000, transReceived: 1000, elapsedTime: 2, numCpus: 2 });
    // The type word and no_delay (offset 12, recv_calls in the results) were swapped twice.
    expect(word(b, 0, true)).toBe(MsgType.TCP_CC_RESPONSE);
    expect(word(b, 12, true)).toBe(1);
    // The response's send buffer size stays where cpu_util is, when no CPU was measured.
    expect(word(b, 24, true)).toBe(16384);
    const r = decodeCcResults(b);
    expect(r).toMatchObject({ bytesReceived: 2000, transReceived: 1000, elapsedTime: 2, numCpus: 2 });
    expect(decodeCcResults(encodeCcResults(response, { bytesReceived: 0, transReceived: 0, elapsedTime: 1, cpuUtil: 12.5 })).cpuUtil).toBe(12.5);
  });
});
