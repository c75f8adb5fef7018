import { describe, expect, test } from "bun:test";
import { decodeClassicStreamRequest, decodeClassicStreamResponse, decodeClassicStreamResults, encodeClassicStreamRequest, encodeClassicStreamResponse, encodeClassicStreamResults } from "./classic-stream.ts";

describe("classic DO_TCP_STREAM messages (TCP_MSS, TCP_SENDFILE)", () => {
  test("request: type 10, no CPU binding, every field a big-endian word at its offset", () => {
    const b = encodeClassicStreamRequest({ sendBufSize: -1, recvBufSize: 131072, receiveSize: 0, testLength: 10, port: 40000, ipFamily: 4, cpuRate: 100 });
    const v = new DataView(b.buffer);
    expect(b.length).toBe(656);
    expect(v.getUint32(0, false)).toBe(10);
    expect(v.getInt32(4, false)).toBe(-1);
    expect(v.getInt32(12, false)).toBe(131072);
    expect(v.getFloat32(36, false)).toBe(100);
    expect(v.getInt32(40, false)).toBe(10);
    expect(v.getInt32(60, false)).toBe(40000);
    expect(decodeClassicStreamRequest(b)).toMatchObject({ recvBufSize: 131072, testLength: 10, port: 40000, ipFamily: 4, cpuRate: 100 });
  });

  test("a NaN CPU rate from a peer reads as 0, not a crash", () => {
    const b = encodeClassicStreamRequest({});
    new DataView(b.buffer).setFloat32(36, Number.NaN, false);
    expect(decodeClassicStreamRequest(b).cpuRate).toBe(0);
  });

  test("response: type 11 with the data port", () => {
    const b = encodeClassicStreamResponse({ recvBufSize: 131072, sendBufSize: 16384, dataPort: 45678 });
    expect(new DataView(b.buffer).getUint32(0, false)).toBe(11);
    expect(decodeClassicStreamResponse(b)).toMatchObject({ servErrno: 0, recvBufSize: 131072, sendBufSize: 16384, dataPort: 45678 });
  });

  test("results: type 12, bytes received as a big-endian double (htond, then htonl per word)", () => {
    const b = encodeClassicStreamResults({ bytesReceived: 11958960128, recvCalls: 7, elapsedTime: 1.5, recvBufSize: 131072, sendBufSize: 16384 });
    const v = new DataView(b.buffer);
    expect(v.getUint32(0, false)).toBe(12);
    expect(Array.from(b.subarray(8, 16))).toEqual([0x42, 0x06, 0x46, 0x7a, 0x00, 0x00, 0x00, 0x00]);
    expect(decodeClassicStreamResults(b)).toMatchObject({ bytesReceived: 11958960128, recvCalls: 7, elapsedTime: 1.5, cpuUtil: -1 });
  });
});
