import { z } from "zod";
import { MsgType } from "./constants.ts";
import { newMessage, readWords, writeWords, type WordField } from "./words.ts";

/**
 * The classic TCP stream messages (nettest_bsd.h), which netperf 2.7.0 still sends for TCP_MSS and TCP_SENDFILE:
 * DO_TCP_STREAM (10), TCP_STREAM_RESPONSE (11), TCP_STREAM_RESULTS (12). Every word of these messages goes through
 * htonl (big-endian on the wire); the one double is made ready for that by htond, so it travels as a plain
 * big-endian double.
 */

const i32 = (d: number) => z.number().int().min(-0x8000_0000).max(0x7fff_ffff).default(d);

export const ClassicStreamRequest = z.object({
  sendBufSize: i32(-1),
  recvBufSize: i32(-1),
  receiveSize: i32(0),
  recvAlignment: i32(8),
  recvOffset: i32(0),
  noDelay: i32(0),
  measureCpu: i32(0),
  cpuRate: z.number().default(0),
  /** > 0 seconds, < 0 bytes. */
  testLength: i32(0),
  soRcvAvoid: i32(0),
  soSndAvoid: i32(0),
  /** The data port asked for (-P ,N); 0 = any. */
  port: i32(0),
  /** netperf's family code (NetFamily). */
  ipFamily: i32(0),
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

export const ClassicStreamResponse = z.object({
  servErrno: i32(0),
  recvBufSize: i32(-1),
  receiveSize: i32(0),
  noDelay: i32(0),
  measureCpu: i32(0),
  testLength: i32(0),
  sendBufSize: i32(-1),
  dataPort: i32(0),
  cpuRate: z.number().default(0),
  soRcvAvoid: i32(0),
  soSndAvoid: i32(0),
});
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
  const b = newMessage();
  writeWords(b, { type: { offset: 0, kind: "u32" }, cpu: { offset: 4, kind: "i32" } }, { type: MsgType.DO_TCP_STREAM, cpu: -1 });
  writeWords(b, REQUEST, ClassicStreamRequest.parse(input));
  return b;
}

export function decodeClassicStreamRequest(b: Uint8Array): ClassicStreamRequest {
  const w = readWords(b, REQUEST);
  // A rate that is no number (NaN from a hostile peer) reads as "not known".
  return ClassicStreamRequest.parse({ ...w, cpuRate: Number.isFinite(w.cpuRate) ? w.cpuRate : 0 });
}

export function encodeClassicStreamResponse(input: z.input<typeof ClassicStreamResponse>): Uint8Array {
  const b = newMessage();
  writeWords(b, { type: { offset: 0, kind: "u32" } }, { type: MsgType.TCP_STREAM_RESPONSE });
  writeWords(b, RESPONSE, ClassicStreamResponse.parse(input));
  return b;
}

export function decodeClassicStreamResponse(b: Uint8Array): ClassicStreamResponse {
  return ClassicStreamResponse.parse(readWords(b, RESPONSE));
}

export function encodeClassicStreamResults(input: z.input<typeof ClassicStreamResults>): Uint8Array {
  const r = ClassicStreamResults.parse(input);
  const b = newMessage();
  writeWords(b, { type: { offset: 0, kind: "u32" } }, { type: MsgType.TCP_STREAM_RESULTS });
  const { bytesReceived, ...words } = r;
  writeWords(b, RESULTS, words);
  new DataView(b.buffer, b.byteOffset, b.byteLength).setFloat64(BYTES_RECEIVED, bytesReceived, false);
  return b;
}

export function decodeClassicStreamResults(b: Uint8Array): ClassicStreamResults {
  const bytesReceived = new DataView(b.buffer, b.byteOffset, b.byteLength).getFloat64(BYTES_RECEIVED, false);
  return ClassicStreamResults.parse({ ...readWords(b, RESULTS), bytesReceived });
}
