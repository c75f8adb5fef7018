/**
 * Linux errno numbers the peers send or are answered with (iperf3's SERVER_ERROR, netperf's serv_errno), and glibc's
 * strerror text for each, as the stock tools print it. Numbers are Linux's whatever host we run on: they travel on
 * the wire.
 */
export const Errno = {
  /** No errno: glibc's strerror(0) is "Success". */
  OK: 0,
  EPERM: 1,
  ENOENT: 2,
  EIO: 5,
  EAGAIN: 11,
  ENOMEM: 12,
  EACCES: 13,
  EBUSY: 16,
  EINVAL: 22,
  EMFILE: 24,
  EPIPE: 32,
  EPROTO: 71,
  EBADMSG: 74,
  EMSGSIZE: 90,
  ENOPROTOOPT: 92,
  EPROTONOSUPPORT: 93,
  EAFNOSUPPORT: 97,
  EADDRINUSE: 98,
  EADDRNOTAVAIL: 99,
  ENETUNREACH: 101,
  ECONNRESET: 104,
  ENOTCONN: 107,
  ETIMEDOUT: 110,
  ECONNREFUSED: 111,
  EHOSTUNREACH: 113,
} as const;

const STRERROR: Record<number, string> = {
  0: "Success",
  1: "Operation not permitted",
  2: "No such file or directory",
  5: "Input/output error",
  11: "Resource temporarily unavailable",
  12: "Cannot allocate memory",
  13: "Permission denied",
  16: "Device or resource busy",
  22: "Invalid argument",
  24: "Too many open files",
  32: "Broken pipe",
  71: "Protocol error",
  74: "Bad message",
  90: "Message too long",
  92: "Protocol not available",
  93: "Protocol not supported",
  97: "Address family not supported by protocol",
  98: "Address already in use",
  99: "Cannot assign requested address",
  101: "Network is unreachable",
  104: "Connection reset by peer",
  107: "Transport endpoint is not connected",
  110: "Connection timed out",
  111: "Connection refused",
  113: "No route to host",
};

/**
 * The Linux errno of a runtime's error by its code ("ECONNREFUSED", as node:net and Bun name them), for a peer that
 * wants the number (iperf3's SERVER_ERROR payload); `otherwise` when the error has no code we know.
 */
export function errnoOfError(error: unknown, otherwise: number): number {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && code !== "OK" && Object.hasOwn(Errno, code) ? Errno[code as keyof typeof Errno] : otherwise;
}

/** glibc's strerror() text, "Unknown error N" beyond the table as glibc says for numbers it does not know. */
export function strerror(errno: number): string {
  return STRERROR[errno] ?? `Unknown error ${errno}`;
}
