import { z } from "zod";
import { IPERF_2_1_8, VersionWords } from "./client-header.ts";
import { MAX_HEADER_LENGTH } from "./flags.ts";
import { Iperf2WireError } from "./wire-error.ts";
import { need, put32, u32 } from "./words.ts";

/**
 * The server's reply to an extended TCP client header ("client_hdr_ack"), 28 bytes, big-endian:
 *   0 type = 2   4 length = 28   8 flags = 0   12 version high   16 version low   20 reserved   24 reserved
 * With --trip-times the length is 52 and three (sec, usec) timestamp pairs follow; we decode those as `tail`.
 * The stock client does not wait for it (except with -X), but sends it to every extended non-reverse header.
 */

export const ACK_TYPE = 2;
export const ACK_LENGTH = 28;

export const ServerAck = z.object({
  flags: z.number().int().min(0).max(0xffffffff),
  version: VersionWords,
  /** Bytes past the 28-byte ack that its length word covers (trip-times timestamps). */
  tail: z.instanceof(Uint8Array),
});
export type ServerAck = z.infer<typeof ServerAck>;

export function encodeServerAck(version: VersionWords = IPERF_2_1_8): Uint8Array {
  const out = new Uint8Array(ACK_LENGTH);
  put32(out, 0, ACK_TYPE);
  put32(out, 4, ACK_LENGTH);
  put32(out, 12, version.high);
  put32(out, 16, version.low);
  return out;
}

/**
 * Length of the ack at the start of `bytes` once its 8-byte type/length prefix is there; `null` while it is not.
 * Lets a client read exactly the ack off a stream that may carry payload right after it (-R, --full-duplex).
 */
export function serverAckLength(bytes: Uint8Array): number | null {
  if (bytes.length < 8) return null;
  const type = u32(bytes, 0);
  const length = u32(bytes, 4);
  if (type !== ACK_TYPE) throw new Iperf2WireError("bad-flags", `server ack type ${type}, expected ${ACK_TYPE}`);
  if (length < ACK_LENGTH || length > MAX_HEADER_LENGTH) throw new Iperf2WireError("bad-length", `server ack length ${length}`);
  return length;
}

export function decodeServerAck(bytes: Uint8Array): ServerAck {
  need(bytes, 8, "server ack");
  const length = serverAckLength(bytes)!;
  need(bytes, length, "server ack");
  return {
    flags: u32(bytes, 8),
    version: { high: u32(bytes, 12), low: u32(bytes, 16) },
    tail: bytes.slice(ACK_LENGTH, length),
  };
}
