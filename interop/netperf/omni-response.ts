import { z } from "zod";
import { MsgType } from "./constants.ts";
import { newMessage, readStrings, readWords, writeStrings, writeWords, type StringField, type WordField, i32, u32 } from "./words.ts";

/**
 * OMNI_RESPONSE, the setup reply (type 98): words 0..19 converted (bytes 0..79), then raw strings
 * (docs/protocols/netperf.md §4).
 */


export const OmniResponse = z.object({
  type: u32(MsgType.OMNI_RESPONSE),
  /** 0 = success; otherwise an errno and the client gives up. */
  servErrno: i32(0),
  /** SO_RCVBUF of the data socket after setting. */
  recvBufSize: i32(-1),
  /** Bytes per receive the server will use. */
  receiveSize: i32(-1),
  recvWidth: i32(0),
  sendBufSize: i32(-1),
  sendSize: i32(-1),
  sendWidth: i32(0),
  /** NO_DELAY and MEASURE_CPU as applied. */
  flags: u32(0),
  /** CPU rate when MEASURE_CPU was granted (CLK_TCK for /proc/stat), else 0. */
  cpuRate: z.number().default(0),
  testLength: u32(0),
  soRcvAvoid: u32(0),
  soSndAvoid: u32(0),
  /** The bound port of the data socket: where the client connects or sends. */
  dataPort: u32(0),
  intervalBurst: u32(0),
  intervalUsecs: u32(0),
  cpuFrequency: u32(0),
  securityInfo: u32(0),
  socketPrio: i32(-1),
  socketTos: i32(-1),
  systemModel: z.string().max(33).default(""),
  cpuModel: z.string().max(80).default(""),
  securityString: z.string().max(16).default(""),
});
export type OmniResponse = z.infer<typeof OmniResponse>;
export type OmniResponseInput = z.input<typeof OmniResponse>;

type StringKey = "systemModel" | "cpuModel" | "securityString";

const WORDS = {
  type: { offset: 0, kind: "u32" },
  servErrno: { offset: 4, kind: "i32" },
  recvBufSize: { offset: 8, kind: "i32" },
  receiveSize: { offset: 12, kind: "i32" },
  recvWidth: { offset: 16, kind: "i32" },
  sendBufSize: { offset: 20, kind: "i32" },
  sendSize: { offset: 24, kind: "i32" },
  sendWidth: { offset: 28, kind: "i32" },
  flags: { offset: 32, kind: "u32" },
  cpuRate: { offset: 36, kind: "f32" },
  testLength: { offset: 40, kind: "u32" },
  soRcvAvoid: { offset: 44, kind: "u32" },
  soSndAvoid: { offset: 48, kind: "u32" },
  dataPort: { offset: 52, kind: "u32" },
  intervalBurst: { offset: 56, kind: "u32" },
  intervalUsecs: { offset: 60, kind: "u32" },
  cpuFrequency: { offset: 64, kind: "u32" },
  securityInfo: { offset: 68, kind: "u32" },
  socketPrio: { offset: 72, kind: "i32" },
  socketTos: { offset: 76, kind: "i32" },
} as const satisfies Record<Exclude<keyof OmniResponse, StringKey>, WordField>;

const STRINGS = {
  systemModel: { offset: 80, size: 33 },
  cpuModel: { offset: 113, size: 80 },
  securityString: { offset: 193, size: 16 },
} as const satisfies Record<StringKey, StringField>;

export function encodeOmniResponse(input: OmniResponseInput): Uint8Array {
  const rsp = OmniResponse.parse(input);
  const b = newMessage();
  writeWords(b, WORDS, rsp);
  writeStrings(b, STRINGS, rsp);
  return b;
}

export function decodeOmniResponse(bytes: Uint8Array): OmniResponse {
  return { ...readWords(bytes, WORDS), ...readStrings(bytes, STRINGS) };
}
