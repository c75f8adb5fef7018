import { AF_INET, AF_INET6, F_GETFL, F_SETFL, O_NONBLOCK, SCM_TIMESTAMPNS, SOCK_CLOEXEC, SOCK_STREAM, SO_REUSEADDR, SOL_SOCKET } from "./constants.ts";
import { loadLibc, type Libc } from "./libc.ts";
import { loadRrLoops, type RrLoops } from "./rr-loops.ts";
import type { SocketFamily } from "./sockaddr.ts";

/**
 * Blocking send/recv (and recvmmsg batches) on a socket fd, for streams that have a Worker to themselves: a system
 * call per transaction, write or read, like the C tools, instead of an event-loop turn (epoll_wait + the call + a JS
 * callback) each time. Every wait is bounded by SO_RCVTIMEO/SO_SNDTIMEO so
 * a silent peer never holds the Worker longer than one timeout.
 */
export interface BlockingIo {
  /** Bytes sent, or -errno. */
  send(fd: number, buf: Uint8Array, len: number): number;
  /** One datagram to `sockaddr` (sockaddr.ts's encoding), without waiting: bytes sent, or -errno. */
  sendTo(fd: number, buf: Uint8Array, len: number, sockaddr: Uint8Array): number;
  /** Bytes read, 0 at EOF, or -errno (-EAGAIN when the receive timeout passed with nothing to read). */
  recv(fd: number, buf: Uint8Array, len: number): number;
  /** Clears O_NONBLOCK and bounds every blocking call by `timeoutMs`. */
  makeBlocking(fd: number, timeoutMs: number): void;
  /**
   * A new blocking TCP socket connected to `sockaddr`, every wait (the handshake included) bounded by `timeoutMs`:
   * its fd, or -errno (the socket is closed then). One transaction of TCP_CRR.
   */
  connect(family: SocketFamily, sockaddr: Uint8Array, timeoutMs: number): number;
  /**
   * A blocking TCP listener on `sockaddr` (SO_REUSEADDR), every wait bounded by `timeoutMs`: its fd, or -errno.
   * Accepted sockets inherit the bounds (the kernel clones the listener's socket), so they are blocking and bounded
   * with no further system call.
   */
  listen(family: SocketFamily, sockaddr: Uint8Array, backlog: number, timeoutMs: number): number;
  /** The next connection of a listener from listen(): its fd, or -errno (-EAGAIN when none came in time). */
  accept(fd: number): number;
  /** Waits up to `timeoutMs` for `fd` to be readable: true when it is. */
  waitReadable(fd: number, timeoutMs: number): boolean;
  /** A new epoll instance (close-on-exec): its fd, or -errno. */
  epollCreate(): number;
  /**
   * epoll_ctl: `op` (EPOLL_CTL_ADD, EPOLL_CTL_DEL) of `fd` for `events` (EPOLLIN, EPOLLOUT; level-triggered), with the
   * fd itself as what epollWait gives back: 0 or -errno.
   */
  epollCtl(epfd: number, op: number, fd: number, events: number): number;
  /** epoll_wait for up to `fds.length` entries: how many are ready (entry i's fd in fds[i]), 0 when `timeoutMs` passed, or -errno. */
  epollWait(epfd: number, fds: Int32Array, timeoutMs: number): number;
  /**
   * Buffers for up to `count` datagrams of up to `size` bytes each, filled by recvBatch; with `stamps`, room for each
   * one's SO_TIMESTAMPNS control message too (the socket must have the option on).
   */
  datagramBatch(count: number, size: number, stamps?: boolean): DatagramBatch;
  /** recvmmsg without waiting: datagrams read into `b` (their lengths in b.lengths), or -errno. */
  recvBatch(fd: number, b: DatagramBatch): number;
  close(fd: number): void;
  /** The TCP_RR loops in C (rr-loops.ts), compiled on the first call; undefined without bun:ffi's cc. */
  loops(): RrLoops | undefined;
}

/** One recvmmsg's worth of datagrams: datagram i is `views[i]` (also as `dataViews[i]`), `lengths[i]` bytes long. */
export interface DatagramBatch {
  readonly count: number;
  readonly views: Uint8Array[];
  readonly dataViews: DataView[];
  readonly lengths: Uint32Array;
  /** Each datagram's source address (sockaddr_in/in6, NAME_BYTES apart): decode with sockaddr.ts's decodeSockaddr. */
  readonly names: Uint8Array;
  /** Each datagram's arrival by the kernel's clock (wall µs) where the batch has stamps and the kernel gave one, else 0. */
  readonly arrivals: Float64Array;
  /** Each message's control buffer (CONTROL_BYTES apart), when the batch has stamps. */
  readonly controls: DataView | undefined;
  /** struct mmsghdr[count] and the iovecs they point to (into the views): kept here to live as long as the batch. */
  readonly headers: Uint8Array;
  readonly headerView: DataView;
  readonly iovecs: BigUint64Array;
}

/** sizeof(struct mmsghdr) on 64-bit Linux, and where its msg_len sits (after the 56-byte msghdr). */
const MMSGHDR_BYTES = 64;
const MSG_LEN_AT = 56;
/** Room per source address: sizeof(struct sockaddr_in6). */
export const NAME_BYTES = 28;
/** CMSG_SPACE(sizeof(struct timespec)): one SCM_TIMESTAMPNS control message (cmsghdr of 16 bytes, then the timespec). */
const CONTROL_BYTES = 32;

export const EAGAIN = 11;
export const EINTR = 4;

/** A -errno that only says "not now" (a timeout with nothing done, or a signal), not a broken connection. */
export const notNow = (n: number): boolean => n === -EAGAIN || n === -EINTR;

/** A send's result as the writers count it: bytes taken, 0 for "not now", -errno once broken. */
export const sendResult = (n: number): number => (n >= 0 || !notNow(n) ? n : 0);
const SO_RCVTIMEO = 20;
const SO_SNDTIMEO = 21;
/** A peer that has gone answers with EPIPE, not a SIGPIPE that would kill the process. */
const MSG_NOSIGNAL = 0x4000;
const MSG_DONTWAIT = 0x40;
const POLLIN = 1;
export const EPOLLIN = 1;
export const EPOLLOUT = 4;
export const EPOLL_CTL_ADD = 1;
export const EPOLL_CTL_DEL = 2;
const EPOLL_CLOEXEC = 0o2000000;
/** struct epoll_event: packed on x86-64 (12 bytes, its data right after the u32 events), 16 bytes elsewhere. */
const EPOLL_EVENT_BYTES = process.arch === "x64" ? 12 : 16;
const EPOLL_DATA_AT = process.arch === "x64" ? 4 : 8;

let loaded: Promise<BlockingIo | undefined> | undefined;

/**
 * glibc through bun:ffi, once per thread; undefined where there is none (Deno, musl, other systems). The calls of
 * the data path (send, recv, poll, recvmmsg) get their own symbols returning plain numbers; set-up goes through the
 * shared Libc, whose errno is the same thread's.
 */
export function loadBlockingIo(): Promise<BlockingIo | undefined> {
  loaded ??= loadLibc().then((libc) => (libc ? open(libc) : undefined));
  return loaded;
}

async function open(libc: Libc): Promise<BlockingIo | undefined> {
  try {
    const { dlopen, FFIType, ptr } = await import("bun:ffi");
    const { symbols: c } = dlopen("libc.so.6", {
      // i64_fast: a plain number for every ssize_t a socket call returns, no BigInt per call
      send: { args: ["i32", "ptr", "u64", "i32"], returns: FFIType.i64_fast },
      recv: { args: ["i32", "ptr", "u64", "i32"], returns: FFIType.i64_fast },
      poll: { args: ["ptr", "u64", "i32"], returns: "i32" },
      epoll_create1: { args: ["i32"], returns: "i32" },
      epoll_ctl: { args: ["i32", "i32", "i32", "ptr"], returns: "i32" },
      epoll_wait: { args: ["i32", "ptr", "i32", "i32"], returns: "i32" },
      recvmmsg: { args: ["i32", "ptr", "u32", "i32", "ptr"], returns: "i32" },
      accept4: { args: ["i32", "ptr", "ptr", "i32"], returns: "i32" },
      sendto: { args: ["i32", "ptr", "u64", "i32", "ptr", "u32"], returns: FFIType.i64_fast },
    });
    const errno = () => libc.errno();
    const compileLoops = await loadRrLoops();
    const timeval = new BigInt64Array(2);
    const one = new Int32Array(1);
    // struct pollfd { int fd; short events; short revents; }
    const pollfd = new Int32Array(2);
    const pollEvents = new Int16Array(pollfd.buffer, 4, 2);
    const epollEvent = new Uint8Array(new ArrayBuffer(16));
    const epollEventView = new DataView(epollEvent.buffer);
    // On an ArrayBuffer of its own from the start (see datagramBatch), grown to the largest wait asked for.
    let epollEvents = new Uint8Array(new ArrayBuffer(16 * EPOLL_EVENT_BYTES));
    let epollEventsView = new DataView(epollEvents.buffer);
    const fail = (what: string) => {
      throw new Error(`${what} failed (errno ${errno()})`);
    };
    const setTimeouts = (fd: number, timeoutMs: number) => {
      timeval[0] = BigInt(Math.floor(timeoutMs / 1000));
      timeval[1] = BigInt(Math.round((timeoutMs % 1000) * 1000));
      for (const opt of [SO_RCVTIMEO, SO_SNDTIMEO]) if (libc.setsockopt(fd, SOL_SOCKET, opt, timeval, 16) !== 0) return false;
      return true;
    };
    return {
      send(fd, buf, len) {
        const n = Number(c.send(fd, buf, len, MSG_NOSIGNAL));
        return n >= 0 ? n : -errno();
      },
      sendTo(fd, buf, len, sockaddr) {
        const n = Number(c.sendto(fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL, sockaddr, sockaddr.byteLength));
        return n >= 0 ? n : -errno();
      },
      recv(fd, buf, len) {
        const n = Number(c.recv(fd, buf, len, 0));
        return n >= 0 ? n : -errno();
      },
      makeBlocking(fd, timeoutMs) {
        const flags = libc.fcntl(fd, F_GETFL, 0);
        if (flags < 0 || libc.fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0) fail("fcntl(O_NONBLOCK)");
        if (!setTimeouts(fd, timeoutMs)) fail("setsockopt(SO_RCVTIMEO)");
      },
      connect(family, sockaddr, timeoutMs) {
        const fd = libc.socket(family === "ipv4" ? AF_INET : AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) return -errno();
        if (setTimeouts(fd, timeoutMs) && libc.connect(fd, sockaddr, sockaddr.byteLength) === 0) return fd;
        const e = errno();
        libc.close(fd);
        return -e;
      },
      listen(family, sockaddr, backlog, timeoutMs) {
        const fd = libc.socket(family === "ipv4" ? AF_INET : AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) return -errno();
        one[0] = 1;
        const ok =
          libc.setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, one, 4) === 0 &&
          setTimeouts(fd, timeoutMs) &&
          libc.bind(fd, sockaddr, sockaddr.byteLength) === 0 &&
          libc.listen(fd, backlog) === 0;
        if (ok) return fd;
        const e = errno();
        libc.close(fd);
        return -e;
      },
      accept(fd) {
        const r = c.accept4(fd, null, null, SOCK_CLOEXEC);
        return r >= 0 ? r : -errno();
      },
      waitReadable(fd, timeoutMs) {
        pollfd[0] = fd;
        pollEvents[0] = POLLIN;
        pollEvents[1] = 0;
        return c.poll(pollfd, 1, timeoutMs) > 0;
      },
      epollCreate() {
        const fd = c.epoll_create1(EPOLL_CLOEXEC);
        return fd >= 0 ? fd : -errno();
      },
      epollCtl(epfd, op, fd, events) {
        epollEventView.setUint32(0, events, true);
        epollEventView.setBigUint64(EPOLL_DATA_AT, BigInt(fd), true);
        return c.epoll_ctl(epfd, op, fd, epollEvent) === 0 ? 0 : -errno();
      },
      epollWait(epfd, fds, timeoutMs) {
        const max = fds.length;
        if (epollEvents.byteLength < max * EPOLL_EVENT_BYTES) {
          epollEvents = new Uint8Array(new ArrayBuffer(max * EPOLL_EVENT_BYTES));
          epollEventsView = new DataView(epollEvents.buffer);
        }
        const n = c.epoll_wait(epfd, epollEvents, max, timeoutMs);
        if (n < 0) return -errno();
        for (let i = 0; i < n; i++) fds[i] = epollEventsView.getInt32(i * EPOLL_EVENT_BYTES + EPOLL_DATA_AT, true);
        return n;
      },
      datagramBatch(count, size, stamps = false) {
        const data = new Uint8Array(new ArrayBuffer(count * size));
        const iovs = new BigUint64Array(count * 2);
        const headers = new Uint8Array(count * MMSGHDR_BYTES);
        const headerView = new DataView(headers.buffer);
        const names = new Uint8Array(count * NAME_BYTES);
        // On an ArrayBuffer of its own from the start: a small typed array's storage moves when its .buffer is first
        // taken, and the kernel would write where it was.
        const controls = stamps ? new DataView(new ArrayBuffer(count * CONTROL_BYTES)) : undefined;
        const base = ptr(data);
        for (let i = 0; i < count; i++) {
          iovs[2 * i] = BigInt(base + i * size);
          iovs[2 * i + 1] = BigInt(size);
          // msghdr: msg_name 0, msg_namelen 8, msg_iov 16, msg_iovlen 24 (the rest stays zero)
          headerView.setBigUint64(i * MMSGHDR_BYTES, BigInt(ptr(names, i * NAME_BYTES)), true);
          headerView.setUint32(i * MMSGHDR_BYTES + 8, NAME_BYTES, true);
          headerView.setBigUint64(i * MMSGHDR_BYTES + 16, BigInt(ptr(iovs, i * 16)), true);
          headerView.setBigUint64(i * MMSGHDR_BYTES + 24, 1n, true);
          // msg_control 32, msg_controllen 40
          if (controls) {
            headerView.setBigUint64(i * MMSGHDR_BYTES + 32, BigInt(ptr(controls, i * CONTROL_BYTES)), true);
            headerView.setBigUint64(i * MMSGHDR_BYTES + 40, BigInt(CONTROL_BYTES), true);
          }
        }
        return {
          count,
          views: Array.from({ length: count }, (_, i) => data.subarray(i * size, (i + 1) * size)),
          dataViews: Array.from({ length: count }, (_, i) => new DataView(data.buffer, i * size, size)),
          lengths: new Uint32Array(count),
          names,
          arrivals: new Float64Array(count),
          controls,
          headers,
          headerView,
          iovecs: iovs,
        };
      },
      recvBatch(fd, b) {
        const n = c.recvmmsg(fd, b.headers, b.count, MSG_DONTWAIT, null);
        if (n < 0) return -errno();
        for (let i = 0; i < n; i++) {
          b.lengths[i] = b.headerView.getUint32(i * MMSGHDR_BYTES + MSG_LEN_AT, true);
          // msg_namelen is in and out: the kernel set it to this address's length; the room goes back for the next call.
          b.headerView.setUint32(i * MMSGHDR_BYTES + 8, NAME_BYTES, true);
          if (b.controls) {
            b.arrivals[i] = stampOf(b.controls, i * CONTROL_BYTES, Number(b.headerView.getBigUint64(i * MMSGHDR_BYTES + 40, true)));
            b.headerView.setBigUint64(i * MMSGHDR_BYTES + 40, BigInt(CONTROL_BYTES), true);
          }
        }
        return n;
      },
      close(fd) {
        libc.close(fd);
      },
      loops: () => compileLoops?.(),
    };
  } catch {
    return undefined;
  }
}

/**
 * The SCM_TIMESTAMPNS control message at `at` in `controls`, `len` bytes long as recvmmsg left it: the arrival in wall
 * µs, or 0 when the kernel gave none (the option off, or the buffer cut short).
 */
export function stampOf(controls: DataView, at: number, len: number): number {
  if (len < CONTROL_BYTES) return 0;
  if (controls.getInt32(at + 8, true) !== SOL_SOCKET || controls.getInt32(at + 12, true) !== SCM_TIMESTAMPNS) return 0;
  return Number(controls.getBigInt64(at + 16, true)) * 1e6 + Number(controls.getBigInt64(at + 24, true)) / 1e3;
}
