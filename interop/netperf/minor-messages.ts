import { MsgType, UNKNOWN_REQUEST_ERRNO } from "./constants.ts";
import { newMessage, readString, readWord, writeString, writeWord, WORD1, TYPE, type WordField } from "./words.ts";

/**
 * The messages besides DO_OMNI (docs/protocols/netperf.md §2.4, §2.6). Passphrase and sysinfo convert only the two
 * header words; every other minor message converts all 164 words, which for our all-zero bodies means big-endian
 * integers throughout.
 */

const TEXT = { offset: 8, size: 648 };
const CALIBRATE_RATE: WordField = { offset: 8, kind: "f32" };
const CALIBRATE_CPUS: WordField = { offset: 12, kind: "u32" };

export function encodePassphrase(passphrase: string): Uint8Array {
  const b = newMessage();
  writeWord(b, TYPE, MsgType.PASSPHRASE);
  writeWord(b, WORD1, -1);
  // netperf keeps a terminating NUL inside the 648 bytes.
  writeString(b, { offset: TEXT.offset, size: TEXT.size - 1 }, passphrase);
  return b;
}

export function decodePassphrase(bytes: Uint8Array): string {
  return readString(bytes, TEXT);
}

/** A reply carrying only a type word and serv_errno (errors, DEBUG_OK). */
export function encodeStatusReply(type: number, servErrno: number): Uint8Array {
  const b = newMessage();
  writeWord(b, TYPE, type);
  writeWord(b, WORD1, servErrno);
  return b;
}

export function encodeUnknownRequestReply(lastReplyType: number): Uint8Array {
  return encodeStatusReply(lastReplyType, UNKNOWN_REQUEST_ERRNO);
}

/** REM_CPU's request: the type word and -1 (no CPU binding), every other word zero. */
export function encodeCpuCalibrateRequest(): Uint8Array {
  return encodeStatusReply(MsgType.CPU_CALIBRATE, -1);
}

export function encodeCpuCalibrateReply(rate: number, cpus: number): Uint8Array {
  const b = encodeStatusReply(MsgType.CPU_CALIBRATE, 0);
  writeWord(b, CALIBRATE_RATE, rate);
  writeWord(b, CALIBRATE_CPUS, cpus);
  return b;
}

export function decodeCpuCalibrateReply(bytes: Uint8Array): { rate: number; cpus: number } {
  return { rate: readWord(bytes, CALIBRATE_RATE), cpus: readWord(bytes, CALIBRATE_CPUS) };
}

/** netserver's answer to DO_SYSINFO since 2.6: four "Deprecated" fields. */
export function encodeSysinfoReply(): Uint8Array {
  const b = encodeStatusReply(MsgType.SYSINFO_RESPONSE, 0);
  writeString(b, TEXT, ",Deprecated,Deprecated,Deprecated,Deprecated");
  return b;
}

export function servErrno(bytes: Uint8Array): number {
  return readWord(bytes, WORD1);
}
