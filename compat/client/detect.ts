/**
 * What serves a port, from its first answer to anyperf's hello (docs/native-protocol.md): a native server answers with
 * a frame (magic "AP"); a stock iperf3 server takes the hello's first 37 bytes as a cookie and answers with one
 * state byte (docs/protocols/iperf3.md §2.2): PARAM_EXCHANGE when idle, ACCESS_DENIED when a test is running,
 * SERVER_ERROR (§2.4) when it rejects what follows the cookie before asking for it. A stock iperf 2 server reads the
 * hello as an extended client header and acks it with its version words (docs/protocols/iperf2.md §2.3). A netserver
 * says nothing until it holds a whole 656-byte request (docs/protocols/netperf.md §2.3): the probe pads the hello to
 * one, whose type no netserver knows, and it answers serv_errno 998 (§2.6).
 */
import { MAGIC } from "../../src/native/protocol/framing.ts";
import { State, stateByte } from "../../interop/iperf3/constants.ts";
import { ACK_LENGTH, ACK_TYPE } from "../../interop/iperf2/server-ack.ts";
import { versionString } from "../../interop/iperf2/client-header.ts";
import { MAX_HEADER_LENGTH } from "../../interop/iperf2/flags.ts";
import { u32 } from "../../interop/iperf2/words.ts";
import { UNKNOWN_REQUEST_ERRNO } from "../../interop/netperf/constants.ts";

export const PEERS = ["anyperf", "iperf3", "netperf", "iperf", "ntttcp"] as const;
export type PeerName = (typeof PEERS)[number];

/** `version`: the server's own, where its answer carries it (iperf 2's ack). */
export type Answer = { peer: PeerName; busy?: boolean; version?: string } | { peer: undefined; reason: string };

/** Where iperf 2's ack carries the server's version words, and the bytes it takes to read them. */
const ACK_VERSION_AT = 12;

/** The answer so far, or undefined while the bytes cannot tell yet. */
export function classifyAnswer(bytes: Uint8Array): Answer | undefined {
  if (bytes.length === 0) return undefined;
  if (bytes[0] === MAGIC[0]) {
    if (bytes.length < MAGIC.length) return undefined;
    if (bytes[1] === MAGIC[1]) return { peer: "anyperf" };
  }
  if (bytes[0] === stateByte(State.PARAM_EXCHANGE)) return { peer: "iperf3" };
  if (bytes[0] === stateByte(State.ACCESS_DENIED)) return { peer: "iperf3", busy: true };
  // A server that checks the parameter length at once (anyperf serve's iperf3, newer stock ones) refuses the hello's.
  if (bytes[0] === stateByte(State.SERVER_ERROR)) return { peer: "iperf3" };
  // iperf 2's ack and netserver's reply both begin with a zero byte: their second word tells them apart.
  if (bytes[0] === 0) {
    if (bytes.length < 8) return undefined;
    const length = u32(bytes, 4);
    if (u32(bytes, 0) === ACK_TYPE && length >= ACK_LENGTH && length <= MAX_HEADER_LENGTH) {
      if (bytes.length < ACK_VERSION_AT + 8) return undefined;
      return { peer: "iperf", version: versionString({ high: u32(bytes, ACK_VERSION_AT), low: u32(bytes, ACK_VERSION_AT + 4) }) };
    }
    if (length === UNKNOWN_REQUEST_ERRNO) return { peer: "netperf" };
  }
  const head = Array.from(bytes.subarray(0, 8), (b) => b.toString(16).padStart(2, "0")).join(" ");
  return { peer: undefined, reason: `it answered ${bytes.length} byte(s) no supported server sends (${head})` };
}
