import { z } from "zod";
import { RESULTS_TYPE_WORD } from "./constants.ts";
import {
  newMessage,
  readStrings,
  readU64,
  readWords,
  writeStrings,
  writeU64,
  writeWords,
  type StringField,
  type WordField,
  i32,
  u32,
} from "./words.ts";

/**
 * Results the server sends after the data phase: words 0..28 converted (bytes 0..115), then strings
 * (docs/protocols/netperf.md §5).
 */

const u64 = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).default(0);
const f32 = z.number().default(0);

export const OmniResults = z.object({
  /** Any value is accepted on receipt (docs/protocols/netperf.md §5.1). */
  type: u32(RESULTS_TYPE_WORD),
  servErrno: i32(0),
  bytesReceived: u64,
  recvCalls: u32(0),
  /** SO_RCVBUF at the end of the test. */
  recvBufSize: i32(-1),
  bytesSent: u64,
  sendCalls: u32(0),
  sendBufSize: i32(-1),
  failedSends: u32(0),
  transReceived: u32(0),
  /** Server's own elapsed seconds, pad time removed; informational. */
  elapsedTime: f32,
  /** % busy; only meaningful when MEASURE_CPU was granted. */
  cpuUtil: f32,
  cpuPercentUser: f32,
  cpuPercentSystem: f32,
  cpuPercentIowait: f32,
  cpuPercentIrq: f32,
  cpuPercentSwintr: f32,
  servDem: f32,
  /** CpuMethod code (8 = /proc/stat, letter S). */
  cpuMethod: u32(0),
  numCpus: u32(0),
  peakCpuId: i32(0),
  peakCpuUtil: f32,
  vendor: i32(0),
  device: i32(0),
  subvendor: i32(0),
  subdevice: i32(0),
  /** TCP_INFO total_retrans of the data socket; -1 for UDP and TCP_CRR. */
  transportRetrans: i32(-1),
  ifname: z.string().max(16).default(""),
  driver: z.string().max(32).default(""),
  version: z.string().max(32).default(""),
  firmware: z.string().max(32).default(""),
  bus: z.string().max(32).default(""),
  ifslot: z.string().max(16).default(""),
  congControl: z.string().max(16).default(""),
});
export type OmniResults = z.infer<typeof OmniResults>;
export type OmniResultsInput = z.input<typeof OmniResults>;

type StringKey = "ifname" | "driver" | "version" | "firmware" | "bus" | "ifslot" | "congControl";
type WordKey = Exclude<keyof OmniResults, StringKey | "bytesReceived" | "bytesSent">;

const WORDS = {
  type: { offset: 0, kind: "u32" },
  servErrno: { offset: 4, kind: "i32" },
  recvCalls: { offset: 16, kind: "u32" },
  recvBufSize: { offset: 20, kind: "i32" },
  sendCalls: { offset: 32, kind: "u32" },
  sendBufSize: { offset: 36, kind: "i32" },
  failedSends: { offset: 40, kind: "u32" },
  transReceived: { offset: 44, kind: "u32" },
  elapsedTime: { offset: 48, kind: "f32" },
  cpuUtil: { offset: 52, kind: "f32" },
  cpuPercentUser: { offset: 56, kind: "f32" },
  cpuPercentSystem: { offset: 60, kind: "f32" },
  cpuPercentIowait: { offset: 64, kind: "f32" },
  cpuPercentIrq: { offset: 68, kind: "f32" },
  cpuPercentSwintr: { offset: 72, kind: "f32" },
  servDem: { offset: 76, kind: "f32" },
  cpuMethod: { offset: 80, kind: "u32" },
  numCpus: { offset: 84, kind: "u32" },
  peakCpuId: { offset: 88, kind: "i32" },
  peakCpuUtil: { offset: 92, kind: "f32" },
  vendor: { offset: 96, kind: "i32" },
  device: { offset: 100, kind: "i32" },
  subvendor: { offset: 104, kind: "i32" },
  subdevice: { offset: 108, kind: "i32" },
  transportRetrans: { offset: 112, kind: "i32" },
} as const satisfies Record<WordKey, WordField>;

const BYTES_RECEIVED = 8;
const BYTES_SENT = 24;

const STRINGS = {
  ifname: { offset: 116, size: 16 },
  driver: { offset: 132, size: 32 },
  version: { offset: 164, size: 32 },
  firmware: { offset: 196, size: 32 },
  bus: { offset: 228, size: 32 },
  ifslot: { offset: 260, size: 16 },
  congControl: { offset: 276, size: 16 },
} as const satisfies Record<StringKey, StringField>;

export function encodeOmniResults(input: OmniResultsInput): Uint8Array {
  const res = OmniResults.parse(input);
  const b = newMessage();
  writeWords(b, WORDS, res);
  writeU64(b, BYTES_RECEIVED, res.bytesReceived);
  writeU64(b, BYTES_SENT, res.bytesSent);
  writeStrings(b, STRINGS, res);
  return b;
}

/**
 * Fields the stock server leaves stale decode as whatever they hold (NaN included); see docs/protocols/netperf.md §5.2.
 */
export function decodeOmniResults(bytes: Uint8Array): OmniResults {
  return {
    ...readWords(bytes, WORDS),
    bytesReceived: readU64(bytes, BYTES_RECEIVED),
    bytesSent: readU64(bytes, BYTES_SENT),
    ...readStrings(bytes, STRINGS),
  };
}
