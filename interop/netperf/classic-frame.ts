import { z } from "zod";
import { TYPE, WORD1, i32, newMessage, readWords, writeWords, type WordField } from "./words.ts";

/**
 * The frame every classic (pre-omni) test message shares: the type in word 0; a request also asks, in word 1, for no
 * CPU binding (-1); then the test's own words at their offsets (nettest_bsd.h).
 */
export function encodeClassicRequest<K extends string>(type: number, layout: Record<K, WordField>, values: Record<NoInfer<K>, number>): Uint8Array {
  const b = newMessage();
  writeWords(b, { type: TYPE, cpu: WORD1 }, { type, cpu: -1 });
  writeWords(b, layout, values);
  return b;
}

/** A response or results message: the type, then the test's words (word 1 is serv_errno, among them). */
export function encodeClassicReply<K extends string>(type: number, layout: Record<K, WordField>, values: Record<NoInfer<K>, number>): Uint8Array {
  const b = newMessage();
  writeWords(b, { type: TYPE }, { type });
  writeWords(b, layout, values);
  return b;
}

/** A request's words; a rate that is no number (NaN from a hostile peer) reads as "not known". */
export function readClassicRequest<K extends string>(b: Uint8Array, layout: Record<K | "cpuRate", WordField>): Record<K | "cpuRate", number> {
  const w = readWords(b, layout);
  return { ...w, cpuRate: Number.isFinite(w.cpuRate) ? w.cpuRate : 0 };
}

/** What every classic request says after its buffer and size words (testLength: > 0 seconds, < 0 a count). */
export const CLASSIC_REQUEST_TAIL = {
  noDelay: i32(0),
  measureCpu: i32(0),
  cpuRate: z.number().default(0),
  testLength: i32(0),
  soRcvAvoid: i32(0),
  soSndAvoid: i32(0),
  /** The data port asked for (-P ,N); 0 = any. */
  port: i32(0),
  /** netperf's family code (NetFamily). */
  ipFamily: i32(0),
};

/** The words every classic response carries (their offsets differ per test). */
export const CLASSIC_RESPONSE_WORDS = {
  servErrno: i32(0),
  recvBufSize: i32(-1),
  noDelay: i32(0),
  measureCpu: i32(0),
  /** netserver never fills it in: 0. */
  testLength: i32(0),
  sendBufSize: i32(-1),
  dataPort: i32(0),
  cpuRate: z.number().default(0),
  soRcvAvoid: i32(0),
  soSndAvoid: i32(0),
};
