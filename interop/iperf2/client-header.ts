import { z } from "zod";
import { HEADER_LENGTH_MASK, HeaderFlag, LowerOptionFlag, MAX_HEADER_LENGTH, hasFlag } from "./flags.ts";
import { Iperf2WireError } from "./wire-error.ts";
import { i32, need, put16, put32, u16, u32 } from "./words.ts";

/**
 * The client header ("client_hdr"): the first bytes of every iperf 2 TCP test connection, and bytes 16.. of every UDP
 * test datagram. Layout (big-endian), from the 2.1.8 captures:
 *
 *   0 flags   4 numThreads   8 port (client listener for -r/-d)   12 bufLen (-l or 0)   16 winBand   20 amount
 *   -- extended block, present when flags has `extend` --
 *   24 type   28 length   32 option word (upper 16 = OptionFlag, lower 16)   36 version high   40 version low
 *   44 reserved (16)  46 tos (16)   48 rate low   52 rate high << 8 | rate units   56 write prefetch
 *   60.. whatever the announced length covers beyond this (trip-times start time, ...): kept as `tail`.
 */

const u32Schema = z.number().int().min(0).max(0xffffffff);
const i32Schema = z.number().int().min(-0x80000000).max(0x7fffffff);

/** iperf 2 version words: high = major << 16 | minor, low = patch << 16 | release kind (3 = final release). */
export const VersionWords = z.object({ high: u32Schema, low: u32Schema });
export type VersionWords = z.infer<typeof VersionWords>;

/** What we announce: the version the captures came from, so stock peers treat us exactly like themselves. */
export const IPERF_2_1_8: VersionWords = { high: 0x00020001, low: 0x00080003 };

export function versionString(v: VersionWords): string {
  return `${v.high >>> 16}.${v.high & 0xffff}.${v.low >>> 16}`;
}

/** Largest rate the 24+8-bit split of offsets 48/52 can carry. */
export const MAX_RATE = 2 ** 53 - 1;

export const ClientHeaderExt = z.object({
  type: i32Schema,
  length: i32Schema,
  /** Upper half of the option word: OptionFlag bits (reverse, full duplex, trip times, no UDP FIN, ...). */
  options: z.number().int().min(0).max(0xffff),
  lowerOptions: z.number().int().min(0).max(0xffff),
  version: VersionWords,
  tos: z.number().int().min(0).max(0xffff),
  /** Target rate in `rateUnits` (0 = bits/s); 0 = unlimited. */
  rate: z.number().int().min(0).max(MAX_RATE),
  rateUnits: z.number().int().min(0).max(0xff),
  writePrefetch: u32Schema,
});
export type ClientHeaderExt = z.infer<typeof ClientHeaderExt>;

export const ClientHeader = z.object({
  flags: u32Schema,
  numThreads: i32Schema,
  port: i32Schema,
  bufLen: i32Schema,
  winBand: i32Schema,
  /** Raw amount word: negative = duration in 1/100 s, zero or positive = byte count. */
  amount: i32Schema,
  ext: ClientHeaderExt.optional(),
  /** Bytes the announced length covers past the decoded fields; kept so a header re-encodes byte for byte. */
  tail: z.instanceof(Uint8Array),
});
export type ClientHeader = z.infer<typeof ClientHeader>;
export type ClientHeaderInput = z.input<typeof ClientHeader>;

export type Transport = "tcp" | "udp";

/** Offset of the client header inside a UDP datagram: after the 16-byte sequence/timestamp block. */
export const UDP_HEADER_OFFSET = 16;
const CLASSIC_LENGTH = 24;
const EXTENDED_LENGTH = 60;

/**
 * How many bytes the client header occupies, from its flags word alone (so a stream reader knows how much to wait
 * for): counted from the start of the TCP stream, or from datagram offset 16 for UDP. `null` means the bytes are not
 * a header at all (iperf 2 `-C` clients, very old clients, or a foreign peer) and are plain payload.
 */
export function clientHeaderLength(flags: number, transport: Transport): number | null {
  const f = flags >>> 0;
  if (!hasFlag(f, HeaderFlag.version1) && !hasFlag(f, HeaderFlag.extend)) return null;
  if (hasFlag(f, HeaderFlag.lengthValid)) {
    const announced = (f & HEADER_LENGTH_MASK) >>> 1;
    // For UDP the announced length includes the 16-byte datagram block before the header.
    const length = transport === "udp" ? announced - UDP_HEADER_OFFSET : announced;
    const minimum = hasFlag(f, HeaderFlag.extend) ? EXTENDED_LENGTH : CLASSIC_LENGTH;
    if (length < minimum || announced > MAX_HEADER_LENGTH) {
      throw new Iperf2WireError("bad-length", `client header length ${announced} does not fit flags 0x${f.toString(16)}`);
    }
    return length;
  }
  // Before 2.0.13 the length bits did not exist: the header was the classic block, plus the extension if flagged.
  return hasFlag(f, HeaderFlag.extend) ? EXTENDED_LENGTH : CLASSIC_LENGTH;
}

/** Decodes a client header that starts at `bytes[0]` (TCP stream start, or UDP datagram offset 16). */
export function decodeClientHeader(bytes: Uint8Array, transport: Transport): ClientHeader {
  need(bytes, 4, "client header flags");
  const flags = u32(bytes, 0);
  const length = clientHeaderLength(flags, transport);
  if (length === null) throw new Iperf2WireError("bad-flags", `flags 0x${flags.toString(16)} announce no client header`);
  need(bytes, length, "client header");
  const header: ClientHeader = {
    flags,
    numThreads: i32(bytes, 4),
    port: i32(bytes, 8),
    bufLen: i32(bytes, 12),
    winBand: i32(bytes, 16),
    amount: i32(bytes, 20),
    tail: new Uint8Array(0),
  };
  if (length >= EXTENDED_LENGTH && hasFlag(flags, HeaderFlag.extend)) {
    const rateHigh = u32(bytes, 52);
    const rate = u32(bytes, 48) + (rateHigh >>> 8) * 4294967296;
    // Past 2^53 bit/s (9 Pbit/s) the rate is no longer exact and could not be re-encoded: not a request to honour.
    if (rate > MAX_RATE) throw new Iperf2WireError("bad-value", `client header rate ${rate} exceeds ${MAX_RATE}`);
    header.ext = {
      type: i32(bytes, 24),
      length: i32(bytes, 28),
      options: u16(bytes, 32),
      lowerOptions: u16(bytes, 34),
      version: { high: u32(bytes, 36), low: u32(bytes, 40) },
      tos: u16(bytes, 46),
      rate,
      rateUnits: rateHigh & 0xff,
      writePrefetch: u32(bytes, 56),
    };
    header.tail = bytes.slice(EXTENDED_LENGTH, length);
  } else {
    header.tail = bytes.slice(CLASSIC_LENGTH, length);
  }
  // Checked here, where a bad header is expected to fail, so that describing a decoded header cannot.
  if (transport === "tcp") congestionName(header);
  return header;
}

/** Offset of the 2.2 congestion-control field (16-bit length, then the name) past the 60-byte header. */
const CONGESTION_AT = 112 - EXTENDED_LENGTH;
const CONGESTION_MAX = 32;

/** A 2.2 TCP header's -Z name, when its lower option word flags one (docs/protocols/iperf2.md §2.2.1). */
export function congestionName(h: ClientHeader): string | undefined {
  if (!h.ext || !hasFlag(h.ext.lowerOptions, LowerOptionFlag.congestion)) return undefined;
  if (h.tail.length < CONGESTION_AT + 2) throw new Iperf2WireError("short", "client header flags a congestion control name its length does not cover");
  const length = u16(h.tail, CONGESTION_AT);
  if (length === 0 || length > CONGESTION_MAX || h.tail.length < CONGESTION_AT + 2 + length) {
    throw new Iperf2WireError("bad-length", `client header congestion control name of ${length} bytes does not fit`);
  }
  return new TextDecoder("latin1").decode(h.tail.subarray(CONGESTION_AT + 2, CONGESTION_AT + 2 + length));
}

/**
 * Encodes a header. The flags word is written as given (build it with `buildClientHeader`), except that the length
 * bits are recomputed from what is actually written, so a decoded header with its tail re-encodes to the same bytes.
 */
export function encodeClientHeader(input: ClientHeaderInput, transport: Transport): Uint8Array<ArrayBuffer> {
  const parsed = ClientHeader.safeParse(input);
  if (!parsed.success) throw new Iperf2WireError("bad-value", `client header: ${parsed.error.issues[0]?.message ?? "invalid"}`);
  const h = parsed.data;
  const base = h.ext ? EXTENDED_LENGTH : CLASSIC_LENGTH;
  const length = base + h.tail.length;
  const announced = transport === "udp" ? length + UDP_HEADER_OFFSET : length;
  if (announced > MAX_HEADER_LENGTH) throw new Iperf2WireError("bad-length", `client header of ${announced} bytes exceeds ${MAX_HEADER_LENGTH}`);
  let flags = h.flags >>> 0;
  if (hasFlag(flags, HeaderFlag.lengthValid)) flags = ((flags & ~HEADER_LENGTH_MASK) | (announced << 1)) >>> 0;
  const out = new Uint8Array(length);
  put32(out, 0, flags);
  put32(out, 4, h.numThreads);
  put32(out, 8, h.port);
  put32(out, 12, h.bufLen);
  put32(out, 16, h.winBand);
  put32(out, 20, h.amount);
  if (h.ext) {
    const e = h.ext;
    put32(out, 24, e.type);
    put32(out, 28, e.length);
    put16(out, 32, e.options);
    put16(out, 34, e.lowerOptions);
    put32(out, 36, e.version.high);
    put32(out, 40, e.version.low);
    put16(out, 46, e.tos);
    put32(out, 48, e.rate % 4294967296);
    put32(out, 52, ((Math.floor(e.rate / 4294967296) << 8) | e.rateUnits) >>> 0);
    put32(out, 56, e.writePrefetch);
  }
  out.set(h.tail, base);
  return out;
}
