/** Numbers netperf 2.7.0 puts on the wire (docs/protocols/netperf.md §2.6, §3.1, §3.2, §8). */

/** The CPU "rate" netperf's /proc/stat method calibrates to (its ticks per second): LOC_CPU/REM_CPU print it. */
export const PROC_STAT_CPU_RATE = 100;

export const MsgType = {
  DEBUG_ON: 1,
  DEBUG_OFF: 2,
  DEBUG_OK: 3,
  CPU_CALIBRATE: 5,
  PASSPHRASE: 6,
  /** Classic stream test messages: netperf 2.7.0 still sends them for TCP_MSS and TCP_SENDFILE. */
  DO_TCP_STREAM: 10,
  TCP_STREAM_RESPONSE: 11,
  TCP_STREAM_RESULTS: 12,
  /** TCP_CC (connect/close): a classic request in 2.7.0 too; its results travel under the response's type. */
  DO_TCP_CC: 300,
  TCP_CC_RESPONSE: 301,
  DO_OMNI: 97,
  OMNI_RESPONSE: 98,
  OMNI_RESULTS: 99,
  DO_SYSINFO: 600,
  SYSINFO_RESPONSE: 601,
} as const;

/** serv_errno netserver sends for a request type it does not know. */
export const UNKNOWN_REQUEST_ERRNO = 998;

/**
 * The stock netserver swaps its reply buffer twice before sending results, so their type word reads 98 in
 * little-endian order. Stock netperf ignores it; we send the same bytes so captures replay byte for byte.
 */
export const RESULTS_TYPE_WORD = 0x6200_0000;

export const OmniFlag = {
  NO_DELAY: 0x1,
  USE_SENDFILE: 0x2,
  CONNECT_TEST: 0x4,
  MEASURE_CPU: 0x8,
  CHECKSUM_OFF: 0x10,
  /** Both "routing allowed" and "report the congestion-control name" (docs/protocols/netperf.md §3.1 pitfall). */
  ROUTING_ALLOWED: 0x20,
  FASTOPEN: 0x800,
  USE_PKTINFO: 0x2000,
  WANT_DEFER_ACCEPT: 0x8000,
  WANT_KEEPALIVE: 0x8000_0000,
} as const;

/** Direction bits, always from the server's point of view. */
export const Direction = {
  XMIT: 0x2,
  RECV: 0x4,
} as const;

/** netperf's own family codes (not AF_*). */
export const NetFamily = {
  UNSPEC: 0,
  INET: 4,
  INET6: 6,
  RDS: 7,
} as const;

export const NetSocketType = {
  STREAM: 1,
  DGRAM: 2,
  DCCP: 3,
  SEQPACKET: 4,
} as const;

export const IpProto = {
  TCP: 6,
  UDP: 17,
} as const;

/** cpu_method codes and the letter netperf prints for each (docs/protocols/netperf.md §8). */
export const CPU_METHOD_LETTERS = "UIPTLRNKSCEMO";
export const CpuMethod = {
  UNKNOWN: 0,
  PROC_STAT: 8,
} as const;

export function cpuMethodLetter(code: number): string {
  return code >= 0 && code < CPU_METHOD_LETTERS.length ? CPU_METHOD_LETTERS[code]! : "?";
}

/** Seconds netserver adds to its own timer when it receives (docs/protocols/netperf.md §7.1). */
export const PAD_TIME_S = 4;
