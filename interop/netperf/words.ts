import { z } from "zod";
/**
 * netperf control messages are fixed 656-byte blocks: a numeric prefix of 32-bit words that the sender passed
 * through htonl (so big-endian on the wire) followed by raw memory (strings). These helpers read and write one
 * field at a time so each message module is a table of offsets.
 */

export const MESSAGE_SIZE = 656;

export type WordKind = "i32" | "u32" | "f32";

export interface WordField {
  offset: number;
  kind: WordKind;
}

export interface StringField {
  offset: number;
  size: number;
}

export function newMessage(): Uint8Array {
  return new Uint8Array(MESSAGE_SIZE);
}

function view(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

export function readWord(bytes: Uint8Array, f: WordField): number {
  const v = view(bytes);
  switch (f.kind) {
    case "i32":
      return v.getInt32(f.offset, false);
    case "u32":
      return v.getUint32(f.offset, false);
    case "f32":
      return v.getFloat32(f.offset, false);
  }
}

export function writeWord(bytes: Uint8Array, f: WordField, value: number): void {
  const v = view(bytes);
  switch (f.kind) {
    case "i32":
      v.setInt32(f.offset, value | 0, false);
      return;
    case "u32":
      v.setUint32(f.offset, value >>> 0, false);
      return;
    case "f32":
      v.setFloat32(f.offset, value, false);
      return;
  }
}

const TWO_32 = 0x1_0000_0000;

/** 64-bit counters travel as a hi word then a lo word, both unsigned. */
export function readU64(bytes: Uint8Array, offset: number): number {
  const v = view(bytes);
  return v.getUint32(offset, false) * TWO_32 + v.getUint32(offset + 4, false);
}

export function writeU64(bytes: Uint8Array, offset: number, value: number): void {
  const v = view(bytes);
  const n = Math.max(0, Math.floor(value));
  v.setUint32(offset, Math.floor(n / TWO_32) >>> 0, false);
  v.setUint32(offset + 4, n % TWO_32, false);
}

/** Fixed-size NUL-padded byte array, read as Latin-1 so every byte survives a round trip. */
export function readString(bytes: Uint8Array, f: StringField): string {
  let out = "";
  for (let i = 0; i < f.size; i++) {
    const b = bytes[f.offset + i]!;
    if (b === 0) break;
    out += String.fromCharCode(b);
  }
  return out;
}

/** Writes at most `size` bytes; like strncpy, a string of exactly `size` bytes gets no NUL. */
export function writeString(bytes: Uint8Array, f: StringField, s: string): void {
  const n = Math.min(s.length, f.size);
  for (let i = 0; i < n; i++) bytes[f.offset + i] = s.charCodeAt(i) & 0xff;
  bytes.fill(0, f.offset + n, f.offset + f.size);
}

export function readWords<K extends string>(bytes: Uint8Array, layout: Record<K, WordField>): Record<K, number> {
  const out = {} as Record<K, number>;
  for (const key of Object.keys(layout) as K[]) out[key] = readWord(bytes, layout[key]);
  return out;
}

export function writeWords<K extends string>(bytes: Uint8Array, layout: Record<K, WordField>, values: Record<NoInfer<K>, number>): void {
  for (const key of Object.keys(layout) as K[]) writeWord(bytes, layout[key], values[key]);
}

export function readStrings<K extends string>(bytes: Uint8Array, layout: Record<K, StringField>): Record<K, string> {
  const out = {} as Record<K, string>;
  for (const key of Object.keys(layout) as K[]) out[key] = readString(bytes, layout[key]);
  return out;
}

export function writeStrings<K extends string>(bytes: Uint8Array, layout: Record<K, StringField>, values: Record<NoInfer<K>, string>): void {
  for (const key of Object.keys(layout) as K[]) writeString(bytes, layout[key], values[key]);
}

/** The message type is word 0 of every message; word 1 is serv_errno in replies, the CPU to bind in requests. */
export const TYPE: WordField = { offset: 0, kind: "u32" };
export const WORD1: WordField = { offset: 4, kind: "i32" };

export function messageType(bytes: Uint8Array): number {
  return readWord(bytes, TYPE);
}

/** A C int word with its default: zod bounds it before it is written. */
export const i32 = (d: number) => z.number().int().min(-0x8000_0000).max(0x7fff_ffff).default(d);
/** A C unsigned int word with its default. */
export const u32 = (d: number) => z.number().int().min(0).max(0xffff_ffff).default(d);
