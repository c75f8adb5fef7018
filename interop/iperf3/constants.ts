/**
 * iperf3 3.12 protocol constants: control-message state bytes, defaults and limits (docs/protocols/iperf3.md §1, §2.2).
 * Values cross-checked against the loopback captures in tests/fixtures/iperf3/.
 */

/** Control-connection state bytes. The wire byte is a signed char, so ACCESS_DENIED and SERVER_ERROR are 0xff/0xfe. */
export const State = {
  TEST_START: 1,
  TEST_RUNNING: 2,
  TEST_END: 4,
  PARAM_EXCHANGE: 9,
  CREATE_STREAMS: 10,
  SERVER_TERMINATE: 11,
  CLIENT_TERMINATE: 12,
  EXCHANGE_RESULTS: 13,
  DISPLAY_RESULTS: 14,
  IPERF_DONE: 16,
  ACCESS_DENIED: -1,
  SERVER_ERROR: -2,
} as const;
export type State = (typeof State)[keyof typeof State];

/** States the stock peer defines but never sends; receiving one is still "unknown" to a 3.12 peer. */
const STATE_NAMES = new Map<number, string>(Object.entries(State).map(([k, v]) => [v, k]));

export function stateName(state: number): string {
  return STATE_NAMES.get(state) ?? `unknown(${state})`;
}

/** The byte written for a state (signed char on the wire). */
export function stateByte(state: State): number {
  return state & 0xff;
}

/** The state a received byte stands for (sign-extends 0x80..0xff). */
export function stateFromByte(byte: number): number {
  return byte >= 0x80 ? byte - 0x100 : byte;
}

export const Defaults = {
  port: 5201,
  durationS: 10,
  tcpBlockSize: 128 * 1024,
  /** UDP block when neither -l nor a usable control-socket MSS is known. */
  udpBlockSizeFallback: 1460,
  /** Default UDP target: 1 Mbit/s in 3.12 is 2^20 bit/s ("1.05 Mbits/sec"). */
  udpRateBps: 1024 * 1024,
  pacingTimerUs: 1000,
  intervalS: 1,
  rcvTimeoutMs: 120_000,
  /** The stock server closes a test this long after time+omit (its safety timer). */
  serverSafetyMarginS: 40,
} as const;

export const Limits = {
  maxStreams: 128,
  maxBlockSize: 1024 * 1024,
  minUdpBlockSize: 16,
  maxUdpBlockSize: 65507,
  maxWindow: 512 * 1024 * 1024,
  maxMss: 9216,
  maxTimeS: 86400,
  maxBurst: 1000,
  maxOmitS: 60,
  minIntervalS: 0.1,
  maxIntervalS: 60,
  minRcvTimeoutMs: 100,
  /** Later iperf3 caps the parameter JSON at 8 KiB; 3.12 has no cap, a stock client sends about 150-400 bytes. */
  maxParamsBytes: 8 * 1024,
  /** Results carry one small object per stream plus, with --get-server-output, the server's whole report. */
  maxResultsBytes: 4 * 1024 * 1024,
} as const;

/** The client version string the 3.12 client sends and prints. */
export const IPERF_VERSION = "3.12";
