import { z } from "zod";
import { HeaderFlag, hasFlag } from "./flags.ts";
import { Iperf2WireError } from "./wire-error.ts";
import { digitsPayload } from "./datagram.ts";
import { need, put16, put32, u16, u32 } from "./words.ts";

/**
 * The bounceback message (`--bounceback`): a TCP connection whose first word has only the bounceback flag carries no
 * client header at all; every request the client writes starts with this block, and the server answers each with
 * the request's bytes, its receive and send stamps filled in (docs/protocols/iperf2.md §2.8). Big-endian:
 *
 *   0 flags (0x00800000)   4 request size   8 burst id   12 bb flags (16)   14 tos (16)   16 run time (1/100 s)
 *   20 client tx sec/usec   28 server rx sec/usec   36 server tx sec/usec   44 hold (usec)
 *   48 rtt   52 read stamp sec/usec   60 reply size (2.2; read only when the bb flags say so: 2.1.8 has payload here)
 */
export const BB_FLAG = {
  quickAck: 0x8000,
  clockSynced: 0x4000,
  tos: 0x2000,
  /** The client's last message: no reply, the test is over. */
  stop: 0x1000,
  /** 2.2: offset 60 holds a reply size that differs from the request size. */
  replySize: 0x0800,
} as const;

/** Bytes through the hold word: what every client version writes. */
export const BB_MANDATORY = 48;
/** Through the reply-size word (2.2). */
const BB_WITH_REPLY_SIZE = 64;
/**
 * Largest request or reply we honour: stock clients default to 100 bytes; this bounds the buffer one header can make
 * us allocate.
 */
export const BB_MAX_SIZE = 1 << 20;

const u32Schema = z.number().int().min(0).max(0xffffffff);
export const BbStamp = z.object({ sec: u32Schema, usec: u32Schema });
export type BbStamp = z.infer<typeof BbStamp>;

export const BouncebackHeader = z.object({
  size: z.number().int().min(BB_MANDATORY).max(BB_MAX_SIZE),
  burstId: u32Schema,
  bbFlags: z.number().int().min(0).max(0xffff),
  tos: z.number().int().min(0).max(0xffff),
  clientTx: BbStamp,
  holdUs: u32Schema,
  /** Bytes the server writes back: the request size unless the reply-size flag names another. */
  replySize: z.number().int().min(BB_MANDATORY).max(BB_MAX_SIZE),
});
export type BouncebackHeader = z.infer<typeof BouncebackHeader>;

/** The first word of a bounceback connection: the bounceback flag without a client header's version/extend bits. */
export function isBouncebackFlags(flags: number): boolean {
  return hasFlag(flags, HeaderFlag.bounceback) && !hasFlag(flags, HeaderFlag.version1) && !hasFlag(flags, HeaderFlag.extend);
}

function sizeField(value: number, what: string): number {
  if (value < BB_MANDATORY || value > BB_MAX_SIZE) {
    throw new Iperf2WireError("bad-length", `bounceback ${what} of ${value} bytes is outside ${BB_MANDATORY}..${BB_MAX_SIZE}`);
  }
  return value;
}

/** The request size, from the first 8 bytes: how much a stream reader must collect before decoding. */
export function bouncebackSize(bytes: Uint8Array): number {
  need(bytes, 8, "bounceback size");
  return sizeField(u32(bytes, 4), "request size");
}

export function decodeBounceback(bytes: Uint8Array): BouncebackHeader {
  const size = bouncebackSize(bytes);
  need(bytes, BB_MANDATORY, "bounceback header");
  const bbFlags = u16(bytes, 12);
  let replySize = size;
  if (hasFlag(bbFlags, BB_FLAG.replySize)) {
    if (size < BB_WITH_REPLY_SIZE) throw new Iperf2WireError("bad-length", `bounceback request of ${size} bytes cannot hold its reply size`);
    need(bytes, BB_WITH_REPLY_SIZE, "bounceback reply size");
    replySize = sizeField(u32(bytes, 60), "reply size");
  }
  return {
    size,
    burstId: u32(bytes, 8),
    bbFlags,
    tos: u16(bytes, 14),
    clientTx: { sec: u32(bytes, 20), usec: u32(bytes, 24) },
    holdUs: u32(bytes, 44),
    replySize,
  };
}

/**
 * The reply to one request: the request's bytes (cut or zero-padded to the reply size) with the server's receive
 * and send stamps, as the client reads them back to split the round trip.
 */
export function encodeBouncebackReply(request: Uint8Array, replySize: number, rx: BbStamp, tx: BbStamp): Uint8Array<ArrayBuffer> {
  need(request, BB_MANDATORY, "bounceback request");
  const out = new Uint8Array(sizeField(replySize, "reply size"));
  out.set(request.subarray(0, Math.min(request.length, replySize)));
  put32(out, 28, rx.sec);
  put32(out, 32, rx.usec);
  put32(out, 36, tx.sec);
  put32(out, 40, tx.usec);
  return out;
}

/** What a client puts in each request of its test; the send stamp and burst id change per request. */
export const BouncebackRequest = z.object({
  size: z.number().int().min(BB_MANDATORY).max(BB_MAX_SIZE),
  replySize: z.number().int().min(BB_MANDATORY).max(BB_MAX_SIZE),
  burstId: u32Schema,
  quickAck: z.boolean(),
  /** -S: written with the TOS flag when not 0; stock leaves the filler there otherwise. */
  tos: z.number().int().min(0).max(255),
  holdUs: u32Schema,
  clientTx: BbStamp,
});
export type BouncebackRequest = z.infer<typeof BouncebackRequest>;

const FILLER = 0x5a;
const UNSTAMPED = 0xffffffff;

/**
 * One request as 2.1.8's client writes it: the block over iperf's digit payload, 0x5a filler where no field is
 * written, the server's stamps all ones. A reply size of its own takes the 2.2 word at 60 and its flag, so the
 * request must hold it (docs/protocols/iperf2.md §2.8).
 */
export function encodeBouncebackRequest(r: BouncebackRequest): Uint8Array<ArrayBuffer> {
  const ownReply = r.replySize !== r.size;
  if (ownReply && r.size < BB_WITH_REPLY_SIZE) throw new Iperf2WireError("bad-length", `a bounceback request of ${r.size} bytes cannot hold a reply size: make it ${BB_WITH_REPLY_SIZE} or more`);
  const out = digitsPayload(sizeField(r.size, "request size"));
  out.fill(FILLER, 0, 60);
  put32(out, 0, HeaderFlag.bounceback);
  put32(out, 4, r.size);
  put32(out, 8, r.burstId);
  const flags = (r.quickAck ? BB_FLAG.quickAck : 0) | (r.tos !== 0 ? BB_FLAG.tos : 0) | (ownReply ? BB_FLAG.replySize : 0);
  put16(out, 12, flags);
  if (r.tos !== 0) put16(out, 14, r.tos);
  put32(out, 16, 0);
  put32(out, 20, r.clientTx.sec);
  put32(out, 24, r.clientTx.usec);
  for (let at = 28; at < 44; at += 4) put32(out, at, UNSTAMPED);
  put32(out, 44, r.holdUs);
  if (ownReply) put32(out, 60, sizeField(r.replySize, "reply size"));
  return out;
}

/** A reply's check: it must be a bounceback block of the size we asked for, else the peer is not answering our test. */
export function checkBouncebackReply(reply: Uint8Array, requestSize: number): void {
  need(reply, BB_MANDATORY, "bounceback reply");
  if (!isBouncebackFlags(u32(reply, 0)) || u32(reply, 4) !== requestSize) {
    throw new Iperf2WireError("bad-flags", `the server's reply is not a bounceback reply (flags 0x${u32(reply, 0).toString(16)}, size ${u32(reply, 4)}): it does not serve --bounceback`);
  }
}
