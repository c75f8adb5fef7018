import { z } from "zod";
import { MsgType } from "./constants.ts";
import { i32, readWords, type WordField } from "./words.ts";
import { CLASSIC_REQUEST_TAIL, CLASSIC_RESPONSE_WORDS, encodeClassicReply, encodeClassicRequest, readClassicRequest } from "./classic-frame.ts";

/**
 * The classic TCP stream messages (nettest_bsd.h), which netperf 2.7.0 still sends for TCP_MSS and TCP_SENDFILE:
 * DO_TCP_STREAM (10), TCP_STREAM_RESPONSE (11), TCP_STREAM_RESULTS (12). Every word of these messages goes through
 * htonl (big-endian on the wire); the one double is made ready for that by htond, so it travels as a plain
 * big-endian double.
 */

export const ClassicStreamRequest = z.object({
  sendBufSize: i32(-1),
  recvBufSize: i32(-1),
  receiveSize: i32(0),
  recvAlignment: i32(8),
  recvOffset: i32(0),
  /** testLength < 0: a count of bytes. */
  ...CLASSIC_REQUEST_TAIL,
});
export type ClassicStreamRequest = z.infer<typeof ClassicStreamRequest>;

const REQUEST: Record<keyof ClassicStreamRequest, WordField> = {
  sendBufSize: { offset: 8, kind: "i32" },
  recvBufSize: { offset: 12, kind: "i32" },
  receiveSize: { offset: 16, kind: "i32" },
  recvAlignment: { offset: 20, kind: "i32" },
  recvOffset: { offset: 24, kind: "i32" },
  noDelay: { offset: 28, kind: "i32" },
  measureCpu: { offset: 32, kind: "i32" },
  cpuRate: { offset: 36, kind: "f32" },
  testLength: { offset: 40, kind: "i32" },
  soRcvAvoid: { offset: 44, kind: "i32" },
  soSndAvoid: { offset: 48, kind: "i32" },
  port: { offset: 60, kind: "i32" },
  ipFamily: { offset: 64, kind: "i32" },
};

export const ClassicStreamResponse = z.object({ ...CLASSIC_RESPONSE_WORDS, receiveSize: i32(0) });
export type ClassicStreamResponse = z.infer<typeof ClassicStreamResponse>;

const RESPONSE: Record<keyof ClassicStreamResponse, WordField> = {
  servErrno: { offset: 4, kind: "i32" },
  recvBufSize: { offset: 8, kind: "i32" },
  receiveSize: { offset: 12, kind: "i32" },
  noDelay: { offset: 16, kind: "i32" },
  measureCpu: { offset: 20, kind: "i32" },
  testLength: { offset: 24, kind: "i32" },
  sendBufSize: { offset: 28, kind: "i32" },
  dataPort: { offset: 32, kind: "i32" },
  cpuRate: { offset: 36, kind: "f32" },
  soRcvAvoid: { offset: 40, kind: "i32" },
  soSndAvoid: { offset: 44, kind: "i32" },
};

export const ClassicStreamResults = z.object({
  bytesReceived: z.number().min(0),
  recvCalls: z.number().int().min(0).max(0xffff_ffff),
  elapsedTime: z.number(),
  cpuUtil: z.number().default(-1),
  servDem: z.number().default(-1),
  cpuMethod: i32(0),
  numCpus: i32(0),
  recvBufSize: i32(-1),
  sendBufSize: i32(-1),
});
export type ClassicStreamResults = z.infer<typeof ClassicStreamResults>;

const BYTES_RECEIVED = 8;
const RESULTS: Record<Exclude<keyof ClassicStreamResults, "bytesReceived">, WordField> = {
  recvCalls: { offset: 16, kind: "u32" },
  elapsedTime: { offset: 20, kind: "f32" },
  cpuUtil: { offset: 24, kind: "f32" },
  servDem: { offset: 28, kind: "f32" },
  cpuMethod: { offset: 32, kind: "i32" },
  numCpus: { offset: 36, kind: "i32" },
  recvBufSize: { offset: 40, kind: "i32" },
  sendBufSize: { offset: 44, kind: "i32" },
};

export function encodeClassicStreamRequest(input: z.input<typeof ClassicStreamRequest>): Uint8Array {
  return encodeClassicRequest(MsgType.DO_TCP_STREAM, REQUEST, ClassicStreamRequest.parse(input));
}

export function decodeClassicStreamRequest(b: Uint8Array): ClassicStreamRequest {
  return ClassicStreamRequest.parse(readClassicRequest(b, REQUEST));
}

export function encodeClassicStreamResponse(input: z.input<typeof ClassicStreamResponse>): Uint8Array {
  return encodeClassicReply(MsgType.TCP_STREAM_RESPONSE, RESPONSE, ClassicStreamResponse.parse(input));
}

export function decodeClassicStreamResponse(b: Uint8Array): ClassicStreamResponse {
  return ClassicStreamResponse.parse(readWords(b, RESPONSE));
}

export function encodeClassicStreamResults(input: z.input<typeof ClassicStreamResults>): Uint8Array {
  const { bytesReceived, ...words } = ClassicStreamResults.parse(input);
  const b = encodeClassicReply(MsgType.TCP_STREAM_RESULTS, RESULTS, words);
  new DataView(b.buffer, b.byteOffset, b.byteLength).setFloat64(BYTES_RECEIVED, bytesReceived, false);
  return b;
}

export function decodeClassicStreamResults(b: Uint8Array): ClassicStreamResults {
  const bytesReceived = new DataView(b.buffer, b.byteOffset, b.byteLength).getFloat64(BYTES_RECEIVED, false);
  return ClassicStreamResults.parse({ ...readWords(b, RESULTS), bytesReceived });
}
