import { z } from "zod";
import { MsgType, NetFamily } from "./constants.ts";
import { decodeAddressWords, encodeAddressWords } from "./ip-words.ts";
import { newMessage, readStrings, readWords, writeStrings, writeWords, type StringField, type WordField, i32, u32 } from "./words.ts";

/** DO_OMNI request (type 97): words 0..39 converted (bytes 0..159), then raw strings (docs/protocols/netperf.md §3). */


export const OmniRequest = z.object({
  type: u32(MsgType.DO_OMNI),
  /** netserver CPU to bind to (`-T ,N`); -1 none. */
  cpuAffinity: i32(-1),
  /** Server SO_SNDBUF (`-S s,`); < 0 leaves the default. */
  sendBufSize: i32(-1),
  /** Server send size for stream sends (`-m ,N`); -1 lets the server choose. */
  sendSize: i32(-1),
  /** Must be a non-zero power of two: the stock netserver crashes on 0. */
  sendAlignment: u32(8),
  sendOffset: u32(0),
  /** Buffers in the client's send ring. */
  sendWidth: u32(1),
  /** Bytes per request (`-r N,`); -1 in stream tests. */
  requestSize: i32(-1),
  recvBufSize: i32(-1),
  receiveSize: i32(-1),
  recvAlignment: u32(8),
  recvOffset: u32(0),
  recvWidth: u32(0),
  responseSize: i32(-1),
  /** OmniFlag bits. */
  flags: u32(0),
  /** Remote CPU rate from `-C rate`, else 0. */
  cpuRate: z.number().default(0),
  /** > 0 seconds; < 0 = -(transactions or bytes); 0 = until signalled. */
  testLength: i32(10),
  soRcvAvoid: u32(0),
  soSndAvoid: u32(0),
  sendDirtyCount: i32(-1),
  recvDirtyCount: i32(-1),
  recvCleanCount: i32(-1),
  /** Port the server should bind its data socket to; 0 = any. */
  dataPort: u32(0),
  /** NetFamily code. */
  ipFamily: u32(NetFamily.INET),
  /** NetSocketType code. */
  socketType: u32(1),
  protocol: u32(6),
  /** Direction bits from the server's view. */
  direction: u32(4),
  /** The client's bound data port. */
  netperfPort: u32(0),
  intervalBurst: u32(0),
  intervalUsecs: u32(0),
  /** The client's data address ("0.0.0.0" when it bound the wildcard). */
  netperfIp: z.string().default("0.0.0.0"),
  /** Address the server should bind; the unspecified address unless test `-H` was given. */
  netserverIp: z.string().default("0.0.0.0"),
  socketPrio: i32(-1),
  socketTos: i32(-1),
  congControl: z.string().max(16).default(""),
  /** Names a file on the server; we carry it but never open it. */
  fillFile: z.string().max(32).default(""),
});
export type OmniRequest = z.infer<typeof OmniRequest>;
export type OmniRequestInput = z.input<typeof OmniRequest>;

type WordKey = Exclude<keyof OmniRequest, "netperfIp" | "netserverIp" | "congControl" | "fillFile">;

const WORDS = {
  type: { offset: 0, kind: "u32" },
  cpuAffinity: { offset: 4, kind: "i32" },
  sendBufSize: { offset: 8, kind: "i32" },
  sendSize: { offset: 12, kind: "i32" },
  sendAlignment: { offset: 16, kind: "u32" },
  sendOffset: { offset: 20, kind: "u32" },
  sendWidth: { offset: 24, kind: "u32" },
  requestSize: { offset: 28, kind: "i32" },
  recvBufSize: { offset: 32, kind: "i32" },
  receiveSize: { offset: 36, kind: "i32" },
  recvAlignment: { offset: 40, kind: "u32" },
  recvOffset: { offset: 44, kind: "u32" },
  recvWidth: { offset: 48, kind: "u32" },
  responseSize: { offset: 52, kind: "i32" },
  flags: { offset: 56, kind: "u32" },
  cpuRate: { offset: 60, kind: "f32" },
  testLength: { offset: 64, kind: "i32" },
  soRcvAvoid: { offset: 68, kind: "u32" },
  soSndAvoid: { offset: 72, kind: "u32" },
  sendDirtyCount: { offset: 76, kind: "i32" },
  recvDirtyCount: { offset: 80, kind: "i32" },
  recvCleanCount: { offset: 84, kind: "i32" },
  dataPort: { offset: 88, kind: "u32" },
  ipFamily: { offset: 92, kind: "u32" },
  socketType: { offset: 96, kind: "u32" },
  protocol: { offset: 100, kind: "u32" },
  direction: { offset: 104, kind: "u32" },
  netperfPort: { offset: 108, kind: "u32" },
  intervalBurst: { offset: 112, kind: "u32" },
  intervalUsecs: { offset: 116, kind: "u32" },
  socketPrio: { offset: 152, kind: "i32" },
  socketTos: { offset: 156, kind: "i32" },
} as const satisfies Record<WordKey, WordField>;

const NETPERF_IP = 120;
const NETSERVER_IP = 136;

const STRINGS = {
  congControl: { offset: 160, size: 16 },
  fillFile: { offset: 176, size: 32 },
} as const satisfies Record<"congControl" | "fillFile", StringField>;

export function encodeOmniRequest(input: OmniRequestInput): Uint8Array {
  const req = OmniRequest.parse(input);
  const b = newMessage();
  writeWords(b, WORDS, req);
  encodeAddressWords(b, NETPERF_IP, req.netperfIp);
  encodeAddressWords(b, NETSERVER_IP, req.netserverIp);
  writeStrings(b, STRINGS, req);
  return b;
}

/** Total over any 656 bytes: every bit pattern decodes; the session decides what is acceptable. */
export function decodeOmniRequest(bytes: Uint8Array): OmniRequest {
  const words = readWords(bytes, WORDS);
  const ipv6 = words.ipFamily === NetFamily.INET6;
  return {
    ...words,
    netperfIp: decodeAddressWords(bytes, NETPERF_IP, ipv6),
    netserverIp: decodeAddressWords(bytes, NETSERVER_IP, ipv6),
    ...readStrings(bytes, STRINGS),
  };
}
