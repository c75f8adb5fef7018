import { AF_INET, AF_INET6, F_GETFL, F_SETFL, O_NONBLOCK, SOCK_CLOEXEC, SOCK_STREAM, SOL_SOCKET } from "./constants.ts";
import type { SocketFamily } from "./sockaddr.ts";

/**
 * Blocking send/recv on a socket fd we own outright, for request/response streams that have a Worker to
 * themselves: two system calls per transaction and side, like netperf, instead of an event-loop turn
 * (epoll_wait + recv + send + a JS callback) per transaction. Every wait is bounded by SO_RCVTIMEO/SO_SNDTIMEO so
 * a silent peer never holds the Worker longer than one timeout.
 */
export interface BlockingIo {
  /** Bytes sent, or -errno. */
  send(fd: number, buf: Uint8Array, len: number): number;
  /** Bytes read, 0 at EOF, or -errno (-EAGAIN when the receive timeout passed with nothing to read). */
  recv(fd: number, buf: Uint8Array, len: number): number;
  /** Clears O_NONBLOCK and bounds every blocking call by `timeoutMs`. */
  makeBlocking(fd: number, timeoutMs: number): void;
  /**
   * A new blocking TCP socket connected to `sockaddr`, every wait (the handshake included) bounded by `timeoutMs`:
   * its fd, or -errno (the socket is closed then). One transaction of TCP_CRR.
   */
  connect(family: SocketFamily, sockaddr: Uint8Array, timeoutMs: number): number;
  /** Waits up to `timeoutMs` for `fd` to be readable: true when it is. */
  waitReadable(fd: number, timeoutMs: number): boolean;
  /** Buffers for up to `count` datagrams of up to `size` bytes each, filled by recvBatch. */
  datagramBatch(count: number, size: number): DatagramBatch;
  /** recvmmsg without waiting: datagrams read into `b` (their lengths in b.lengths), or -errno. */
  recvBatch(fd: number, b: DatagramBatch): number;
  close(fd: number): void;
}

/** One recvmmsg's worth of datagrams: datagram i is `views[i]` (also as `dataViews[i]`), `lengths[i]` bytes long. */
export interface DatagramBatch {
  readonly count: number;
  readonly views: Uint8Array[];
  readonly dataViews: DataView[];
  readonly lengths: Uint32Array;
  /** struct mmsghdr[count] and the iovecs they point to (into the views): kept here to live as long as the batch. */
  readonly headers: Uint8Array;
  readonly iovecs: BigUint64Array;
}

export const EAGAIN = 11;
export const EINTR = 4;
const SO_RCVTIMEO = 20;
const SO_SNDTIMEO = 21;
/** A peer that has gone answers with EPIPE, not a SIGPIPE that would kill the process. */
const MSG_NOSIGNAL = 0x4000;
const MSG_DONTWAIT = 0x40;
const POLLIN = 1;

let loaded: Promise<BlockingIo | undefined> | undefined;

/** glibc through bun:ffi, once per thread; undefined where there is none (Deno, musl, other systems). */
export function loadBlockingIo(): Promise<BlockingIo | undefined> {
  loaded ??= open();
  return loaded;
}

async function open(): Promise<BlockingIo | undefined> {
  if (typeof Bun === "undefined" || process.platform !== "linux") return undefined;
  try {
    const { dlopen, read, FFIType, ptr } = await import("bun:ffi");
    const { symbols: c } = dlopen("libc.so.6", {
      // i64_fast: a plain number for every ssize_t a socket call returns, no BigInt per call
      send: { args: ["i32", "ptr", "u64", "i32"], returns: FFIType.i64_fast },
      recv: { args: ["i32", "ptr", "u64", "i32"], returns: FFIType.i64_fast },
      fcntl: { args: ["i32", "i32", "i32"], returns: "i32" },
      socket: { args: ["i32", "i32", "i32"], returns: "i32" },
      connect: { args: ["i32", "ptr", "u32"], returns: "i32" },
      poll: { args: ["ptr", "u64", "i32"], returns: "i32" },
      recvmmsg: { args: ["i32", "ptr", "u32", "i32", "ptr"], returns: "i32" },
      setsockopt: { args: ["i32", "i32", "i32", "ptr", "u32"], returns: "i32" },
      close: { args: ["i32"], returns: "i32" },
      __errno_location: { args: [], returns: "ptr" },
    });
    const errnoAt = c.__errno_location();
    const errno = () => (errnoAt === null ? 0 : read.i32(errnoAt, 0));
    const timeval = new BigInt64Array(2);
    // struct pollfd { int fd; short events; short revents; }
    const pollfd = new Int32Array(2);
    const pollEvents = new Int16Array(pollfd.buffer, 4, 2);
    const fail = (what: string) => {
      throw new Error(`${what} failed (errno ${errno()})`);
    };
    const setTimeouts = (fd: number, timeoutMs: number) => {
      timeval[0] = BigInt(Math.floor(timeoutMs / 1000));
      timeval[1] = BigInt(Math.round((timeoutMs % 1000) * 1000));
      for (const opt of [SO_RCVTIMEO, SO_SNDTIMEO]) if (c.setsockopt(fd, SOL_SOCKET, opt, timeval, 16) !== 0) return false;
      return true;
    };
    return {
      send(fd, buf, len) {
        const n = Number(c.send(fd, buf, len, MSG_NOSIGNAL));
        return n >= 0 ? n : -errno();
      },
      recv(fd, buf, len) {
        const n = Number(c.recv(fd, buf, len, 0));
        return n >= 0 ? n : -errno();
      },
      makeBlocking(fd, timeoutMs) {
        const flags = c.fcntl(fd, F_GETFL, 0);
        if (flags < 0 || c.fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0) fail("fcntl(O_NONBLOCK)");
        if (!setTimeouts(fd, timeoutMs)) fail("setsockopt(SO_RCVTIMEO)");
      },
      connect(family, sockaddr, timeoutMs) {
        const fd = c.socket(family === "ipv4" ? AF_INET : AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) return -errno();
        if (setTimeouts(fd, timeoutMs) && c.connect(fd, sockaddr, sockaddr.byteLength) === 0) return fd;
        const e = errno();
        c.close(fd);
        return -e;
      },
      waitReadable(fd, timeoutMs) {
        pollfd[0] = fd;
        pollEvents[0] = POLLIN;
        pollEvents[1] = 0;
        return c.poll(pollfd, 1, timeoutMs) > 0;
      },
      datagramBatch(count, size) {
        // struct mmsghdr: msghdr (56 bytes: name, namelen, iov, iovlen, control, controllen, flags) + msg_len + pad.
        const HDR = 64;
        const data = new Uint8Array(new ArrayBuffer(count * size));
        const iovs = new BigUint64Array(count * 2);
        const headers = new Uint8Array(count * HDR);
        const hv = new DataView(headers.buffer);
        const base = ptr(data);
        for (let i = 0; i < count; i++) {
          iovs[2 * i] = BigInt(base + i * size);
          iovs[2 * i + 1] = BigInt(size);
          hv.setBigUint64(i * HDR + 16, BigInt(ptr(iovs, i * 16)), true);
          hv.setBigUint64(i * HDR + 24, 1n, true);
        }
        return {
          count,
          views: Array.from({ length: count }, (_, i) => data.subarray(i * size, (i + 1) * size)),
          dataViews: Array.from({ length: count }, (_, i) => new DataView(data.buffer, i * size, size)),
          lengths: new Uint32Array(count),
          headers,
          iovecs: iovs,
        };
      },
      recvBatch(fd, b) {
        const n = c.recvmmsg(fd, b.headers, b.count, MSG_DONTWAIT, null);
        if (n < 0) return -errno();
        const hv = new DataView(b.headers.buffer);
        for (let i = 0; i < n; i++) b.lengths[i] = hv.getUint32(i * 64 + 56, true);
        return n;
      },
      close(fd) {
        c.close(fd);
      },
    };
  } catch {
    return undefined;
  }
}
