import { Iperf2WireError } from "./wire-error.ts";

/** Big-endian 32-bit access with one bounds check that throws a typed "short" error instead of a RangeError. */

export function need(bytes: Uint8Array, length: number, what: string): void {
  if (bytes.length < length) throw new Iperf2WireError("short", `${what} needs ${length} bytes, got ${bytes.length}`);
}

export function u32(bytes: Uint8Array, offset: number): number {
  return ((bytes[offset]! << 24) | (bytes[offset + 1]! << 16) | (bytes[offset + 2]! << 8) | bytes[offset + 3]!) >>> 0;
}

export function i32(bytes: Uint8Array, offset: number): number {
  return u32(bytes, offset) | 0;
}

export function u16(bytes: Uint8Array, offset: number): number {
  return (bytes[offset]! << 8) | bytes[offset + 1]!;
}

/** Writes the low 32 bits of `value` (signed or unsigned) big-endian. */
export function put32(bytes: Uint8Array, offset: number, value: number): void {
  const v = value >>> 0;
  bytes[offset] = v >>> 24;
  bytes[offset + 1] = (v >>> 16) & 0xff;
  bytes[offset + 2] = (v >>> 8) & 0xff;
  bytes[offset + 3] = v & 0xff;
}

export function put16(bytes: Uint8Array, offset: number, value: number): void {
  bytes[offset] = (value >>> 8) & 0xff;
  bytes[offset + 1] = value & 0xff;
}

const TWO_32 = 4294967296;

/**
 * Counts past 2^53 (no real test gets there; a corrupt report or a FIN with sequence -2^63 does) saturate instead of
 * turning into inexact numbers that every count schema refuses.
 */
export function safeCount(value: number): number {
  return Math.min(value, Number.MAX_SAFE_INTEGER);
}

/** A 64-bit count sent as two 32-bit words, saturated at 2^53 - 1 (`safeCount`). */
export function join64(high: number, low: number): number {
  return safeCount((high >>> 0) * TWO_32 + (low >>> 0));
}

export function split64(value: number): { high: number; low: number } {
  return { high: Math.floor(value / TWO_32) >>> 0, low: value % TWO_32 >>> 0 };
}

/**
 * iperf 2 sends times and other fractional values as a pair (whole part, millionths), both signed 32-bit; the
 * fractional part carries the sign of the value (-15 us is 0, -15).
 */
export function joinSecUsec(sec: number, usec: number): number {
  return (sec | 0) + (usec | 0) / 1e6;
}

export function splitSecUsec(value: number): { sec: number; usec: number } {
  let sec = Math.trunc(value);
  let usec = Math.round((value - sec) * 1e6);
  if (Math.abs(usec) >= 1e6) {
    sec += Math.sign(usec);
    usec -= Math.sign(usec) * 1e6;
  }
  return { sec, usec };
}
