/**
 * Why a byte sequence is not a valid iperf 2 message. Decoders throw this (never a RangeError from a DataView), so a
 * server can log one line and drop the peer instead of crashing.
 */
export type Iperf2WireErrorCode =
  /** Fewer bytes than the message needs; a stream decoder waits for more, a datagram decoder gives up. */
  | "short"
  /** The flags word announces something this decoder cannot honour (no header bits, unknown message type). */
  | "bad-flags"
  /** A length field is outside what the message can hold (header length beyond 256, ack length below 28). */
  | "bad-length"
  /** A field value that cannot be encoded (negative count, port above 65535, rate above 2^56). */
  | "bad-value";

export class Iperf2WireError extends Error {
  constructor(
    readonly code: Iperf2WireErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "Iperf2WireError";
  }
}
