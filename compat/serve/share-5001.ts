import { TCP_FILL } from "../ntttcp/specs.ts";

/**
 * iperf 2 and ntttcp both default to TCP 5001; what a client sends first tells them apart
 * (docs/protocols/iperf2.md §2.2, docs/protocols/ntttcp-interop.md §1): an iperf 2.1.8 client starts with its header,
 * whose first byte holds flag bits (0x40, 0x80, ...) and whose second is 0x01; a headerless `iperf -C` with ASCII
 * digits; an ntttcp sender (either OS, any mode) with raw 'A' bytes. An ntttcp sender in sync mode connects and stays
 * silent until its test starts (Linux: 'R' on PORT-1; Windows: its token exchanges), then writes: a silent connection
 * waits for its first bytes, and is closed when the hold ends without any. Routing by bytes alone, not by which host
 * made a sync contact, keeps idle or hostile connections from the sender's own host out of its test.
 */

export type SharedRoute = "iperf" | "ntttcp";

const NTTTCP_PREFIX = 4;

export function decide5001(first: Uint8Array, _peer: string | undefined, timedOut: boolean): SharedRoute | "wait" | "drop" {
  if (first.length === 0) return timedOut ? "drop" : "wait";
  const n = Math.min(first.length, NTTTCP_PREFIX);
  for (let i = 0; i < n; i++) if (first[i] !== TCP_FILL) return "iperf";
  return n === NTTTCP_PREFIX || timedOut ? "ntttcp" : "wait";
}
