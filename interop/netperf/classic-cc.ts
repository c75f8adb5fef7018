import { z } from "zod";
import { MsgType } from "./constants.ts";
import { i32, readWord, readWords, writeWord, writeWords, type WordField } from "./words.ts";
import { CLASSIC_REQUEST_TAIL, CLASSIC_RESPONSE_WORDS, encodeClassicReply, encodeClassicRequest, readClassicRequest } from "./classic-frame.ts";

/**
 * netperf's TCP_CC messages (nettest_bsd.h), which 2.7.0 still sends as classic requests, not DO_OMNI: DO_TCP_CC
 * (300), TCP_CC_RESPONSE (301) and the results, which netserver sends under the response's type. Every word goes
 * through htonl; the floats are C floats in those words.
 */

export const CcRequest = z.object({
  recvBufSize: i32(-1),
  sendBufSize: i32(-1),
  recvAlignment: i32(8),
  recvOffset: i32(0),
  sendAlignment: i32(8),
  sendOffset: i32(0),
  /** Only echoed into the results' byte count: no byte moves in TCP_CC. */
  requestSize: i32(1),
  responseSize: i32(1),
  /** testLength < 0: a count of transactions. */
  ...CLASSIC_REQUEST_TAIL,
});
export type CcRequest = z.infer<typeof CcRequest>;

const REQUEST: Record<keyof CcRequest, WordField> = {
  recvBufSize: { offset: 8, kind: "i32" },
  sendBufSize: { offset: 12, kind: "i32" },
  recvAlignment: { offset: 16, kind: "i32" },
  recvOffset: { offset: 20, kind: "i32" },
  sendAlignment: { offset: 24, kind: "i32" },
  sendOffset: { offset: 28, kind: "i32" },
  requestSize: { offset: 32, kind: "i32" },
  responseSize: { offset: 36, kind: "i32" },
  noDelay: { offset: 40, kind: "i32" },
  measureCpu: { offset: 44, kind: "i32" },
  cpuRate: { offset: 48, kind: "f32" },
  testLength: { offset: 52, kind: "i32" },
  soRcvAvoid: { offset: 56, kind: "i32" },
  soSndAvoid: { offset: 60, kind: "i32" },
  port: { offset: 64, kind: "i32" },
  ipFamily: { offset: 68, kind: "i32" },
};

export const CcResponse = z.object(CLASSIC_RESPONSE_WORDS);
export type CcResponse = z.infer<typeof CcResponse>;

const RESPONSE: Record<keyof CcResponse, WordField> = {
  servErrno: { offset: 4, kind: "i32" },
  recvBufSize: { offset: 8, kind: "i32" },
  noDelay: { offset: 12, kind: "i32" },
  measureCpu: { offset: 16, kind: "i32" },
  testLength: { offset: 20, kind: "i32" },
  sendBufSize: { offset: 24, kind: "i32" },
  dataPort: { offset: 28, kind: "i32" },
  cpuRate: { offset: 32, kind: "f32" },
  soRcvAvoid: { offset: 36, kind: "i32" },
  soSndAvoid: { offset: 40, kind: "i32" },
};

export const CcResults = z.object({
  bytesReceived: z.number().int().min(0).max(0xffff_ffff),
  transReceived: z.number().int().min(0).max(0xffff_ffff),
  elapsedTime: z.number(),
  /** Set only when the client asked for remote CPU; otherwise the word keeps what was there. */
  cpuUtil: z.number().optional(),
  numCpus: i32(1),
});
export type CcResults = z.infer<typeof CcResults>;

const RESULTS: Record<Exclude<keyof CcResults, "cpuUtil">, WordField> = {
  bytesReceived: { offset: 8, kind: "u32" },
  transReceived: { offset: 16, kind: "u32" },
  elapsedTime: { offset: 20, kind: "f32" },
  numCpus: { offset: 36, kind: "i32" },
};
const CPU_UTIL: WordField = { offset: 24, kind: "f32" };

export function encodeCcRequest(input: z.input<typeof CcRequest>): Uint8Array {
  return encodeClassicRequest(MsgType.DO_TCP_CC, REQUEST, CcRequest.parse(input));
}

export function decodeCcRequest(b: Uint8Array): CcRequest {
  return CcRequest.parse(readClassicRequest(b, REQUEST));
}

export function encodeCcResponse(input: z.input<typeof CcResponse>): Uint8Array {
  return encodeClassicReply(MsgType.TCP_CC_RESPONSE, RESPONSE, CcResponse.parse(input));
}

export function decodeCcResponse(b: Uint8Array): CcResponse {
  return CcResponse.parse(readWords(b, RESPONSE));
}

/**
 * netserver builds the results in the buffer it sent the response from, which send_response left in network order,
 * and converts the whole buffer again: the words it did not set (the type among them) go out byte-swapped.
 */
export function encodeCcResults(sentResponse: Uint8Array, input: z.input<typeof CcResults>): Uint8Array {
  const r = CcResults.parse(input);
  const b = new Uint8Array(sentResponse);
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  for (let off = 0; off + 4 <= b.length; off += 4) v.setUint32(off, v.getUint32(off, false), true);
  const { cpuUtil, ...always } = r;
  writeWords(b, RESULTS, always);
  if (cpuUtil !== undefined) writeWord(b, CPU_UTIL, cpuUtil);
  return b;
}

export function decodeCcResults(b: Uint8Array): CcResults {
  const w = readWords(b, RESULTS);
  const cpuUtil = readWord(b, CPU_UTIL);
  return CcResults.parse({ ...w, elapsedTime: Number.isFinite(w.elapsedTime) ? w.elapsedTime : 0, cpuUtil: Number.isFinite(cpuUtil) ? cpuUtil : undefined });
}
