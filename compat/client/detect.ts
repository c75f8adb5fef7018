/**
 * What serves a port, from its first answer to anyperf's hello (docs/native-protocol.md): a native server answers with
 * a frame (magic "AP"); a stock iperf3 server takes the hello's first 37 bytes as a cookie and answers with one
 * state byte (docs/protocols/iperf3.md §2.2): PARAM_EXCHANGE when idle, ACCESS_DENIED when a test is running,
 * SERVER_ERROR (§2.4) when it rejects what follows the cookie before asking for it.
 */
import { MAGIC } from "../../src/native/protocol/framing.ts";
import { State, stateByte } from "../../interop/iperf3/constants.ts";

export const PEERS = ["anyperf", "iperf3", "netperf", "iperf", "ntttcp"] as const;
export type PeerName = (typeof PEERS)[number];

export type Answer = { peer: PeerName; busy?: boolean } | { peer: undefined; reason: string };

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
  const head = Array.from(bytes.subarray(0, 8), (b) => b.toString(16).padStart(2, "0")).join(" ");
  return { peer: undefined, reason: `it answered ${bytes.length} byte(s) no supported server sends (${head})` };
}
