import { readFileSync } from "node:fs";
import { explainSocketError, UserError } from "../errors.ts";
import type { SocketOptions } from "../stream-spec.ts";
import {
  AF_INET,
  AF_INET6,
  CPU_SETSIZE,
  EINPROGRESS,
  F_GETFL,
  F_SETFL,
  IP_MTU_DISCOVER,
  IP_PMTUDISC_DO,
  IP_TOS,
  IPPROTO_IP,
  IPPROTO_IPV6,
  IPPROTO_TCP,
  IPV6_TCLASS,
  MSS_MAX,
  MSS_MIN,
  O_NONBLOCK,
  PRIO_PROCESS,
  SO_DOMAIN,
  SO_ERROR,
  SO_MAX_PACING_RATE,
  SO_RCVBUF,
  SO_REUSEADDR,
  SO_SNDBUF,
  SO_TYPE,
  SOCK_CLOEXEC,
  SOCK_DGRAM,
  SOCK_STREAM,
  SOL_SOCKET,
  TCP_CONGESTION,
  TCP_INFO,
  TCP_CORK,
  TCP_MAXSEG,
  TCP_NODELAY,
  TCP_QUICKACK,
  TCP_NOTSENT_LOWAT,
  TCP_KEEPIDLE,
  TCP_KEEPINTVL,
  TCP_KEEPCNT,
  SO_KEEPALIVE,
  TcpState,
} from "./constants.ts";
import { SyscallError, errnoName } from "./errno.ts";
import { loadLibc, type Libc } from "./libc.ts";
import { decodeSockaddr, encodeSockaddr, familyOf, type SocketFamily } from "./sockaddr.ts";
import { parseTcpInfo, TCP_INFO_BUFFER, type TcpInfo } from "./tcp-info.ts";

const F_DUPFD_CLOEXEC = 1030;
const SO_LINGER = 13;
const SHUT_WR = 1;
const EINTR = 4;
/** struct timespec of the last datagram read (SIOCGSTAMPNS_OLD: 64-bit time_t on the 64-bit targets we load on). */
const SIOCGSTAMPNS = 0x8907;

/** What the kernel reports after apply(), for each option that was asked for (buffers read back doubled). */
export interface AppliedOptions {
  sendBuffer?: number;
  recvBuffer?: number;
  noDelay?: boolean;
  keepAlive?: boolean;
  cork?: boolean;
  quickAck?: boolean;
  notSentLowat?: number;
  congestion?: string;
  mss?: number;
  tos?: number;
  pacingRate?: number;
  dontFragment?: boolean;
}

/** A whitespace-separated /proc/sys value as a list ([] when unreadable). */
function readProcList(path: string): string[] {
  try {
    return readFileSync(path, "latin1").trim().split(/\s+/).filter((s) => s !== "");
  } catch {
    return [];
  }
}

/**
 * setsockopt/getsockopt, TCP_INFO, dup, backlog, CPU pinning and pre-connect sockets through glibc. One instance per
 * thread (see loadSockopt); the scratch buffers below are reused, so an instance must not be shared across threads.
 */
export class Sockopt {
  readonly #int = new Int32Array(1);
  readonly #len = new Uint32Array(1);
  readonly #info = new Uint8Array(TCP_INFO_BUFFER);
  readonly #name = new Uint8Array(64);
  readonly #linger = new Int32Array(2);
  readonly #stamp = new BigInt64Array(2);

  constructor(private readonly c: Libc) {}

  #fail(call: string): never {
    throw new SyscallError(call, this.c.errno());
  }

  getInt(fd: number, level: number, opt: number): number {
    this.#len[0] = 4;
    if (this.c.getsockopt(fd, level, opt, this.#int, this.#len) !== 0) this.#fail(`getsockopt(${level}, ${opt})`);
    return this.#int[0] as number;
  }

  setInt(fd: number, level: number, opt: number, value: number): void {
    this.#int[0] = value;
    if (this.c.setsockopt(fd, level, opt, this.#int, 4) !== 0) this.#fail(`setsockopt(${level}, ${opt})`);
  }

  /** TCP_INFO of a TCP socket; undefined when the kernel refuses it (not TCP, closed fd). */
  tcpInfo(fd: number): TcpInfo | undefined {
    this.#len[0] = this.#info.length;
    if (this.c.getsockopt(fd, IPPROTO_TCP, TCP_INFO, this.#info, this.#len) !== 0) return undefined;
    return parseTcpInfo(this.#info, this.#len[0] as number);
  }

  /** The socket's congestion control algorithm ("cubic"); undefined if it has none (not TCP). */
  congestionControl(fd: number): string | undefined {
    this.#name.fill(0);
    this.#len[0] = 16;
    if (this.c.getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, this.#name, this.#len) !== 0) return undefined;
    const n = Math.min(this.#len[0] as number, 16);
    const end = this.#name.subarray(0, n).indexOf(0);
    return new TextDecoder().decode(this.#name.subarray(0, end < 0 ? n : end));
  }

  /** Algorithms the kernel has (loaded or built in). */
  availableCongestionControls(): string[] {
    return readProcList("/proc/sys/net/ipv4/tcp_available_congestion_control");
  }

  /**
   * The kernel's arrival time (wall clock, seconds) of the datagram last read from `fd` (SIOCGSTAMPNS), as iperf 2's
   * server times its datagrams (SO_TIMESTAMP) rather than by when its loop got to them. The first call on a socket
   * turns the kernel's stamping on and returns undefined, as do later calls before a stamped datagram was read. Where
   * a read took several datagrams at once, each is given the last one's time.
   */
  lastArrival(fd: number): number | undefined {
    if (this.c.ioctl(fd, SIOCGSTAMPNS, this.#stamp) !== 0) return undefined;
    return Number(this.#stamp[0]) + Number(this.#stamp[1]) / 1e9;
  }

  /** A close-on-exec duplicate of fd (the original stays open). */
  dup(fd: number): number {
    const r = this.c.fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (r < 0) this.#fail("dup");
    return r;
  }

  close(fd: number): void {
    if (this.c.close(fd) !== 0) {
      const errno = this.c.errno();
      // After EINTR Linux has already released the fd; retrying could close someone else's.
      if (errno !== EINTR) throw new SyscallError("close", errno);
    }
  }

  /**
   * Half-close: our FIN goes out while the socket still reads. Bun's end() closes both ways, so a peer that still
   * answers (netperf's TCP_RR server, a reverse-direction drain) would get a reset.
   */
  shutdownWrite(fd: number): void {
    if (this.c.shutdown(fd, SHUT_WR) !== 0) this.#fail("shutdown");
  }

  /**
   * Takes an accepted main-thread socket away from Bun so a Worker can adopt it: `count` duplicates of its fd, then
   * the main-thread socket is terminated. Bun's terminate() sets SO_LINGER {on, 0}, which belongs to the socket, not
   * the fd: left alone, the Worker's final close would send a reset instead of a FIN, so linger is switched off again.
   */
  handOff(s: { fd?: number; terminate(): void }, count = 1): number[] {
    const fd = s.fd;
    if (fd === undefined) throw new Error("socket has no fd to hand to a Worker");
    const fds = Array.from({ length: count }, () => this.dup(fd));
    s.terminate();
    this.#linger.fill(0);
    if (this.c.setsockopt(fds[0]!, SOL_SOCKET, SO_LINGER, this.#linger, 8) !== 0) this.#fail("setsockopt(SO_LINGER)");
    return fds;
  }

  /**
   * TCP keepalive on, with the idle time, probe interval and probe count given (the kernel's own where absent),
   * each read back: a value the kernel holds differently is refused like one it rejects.
   */
  setKeepalive(fd: number, k: { idleS?: number; intervalS?: number; count?: number }): void {
    const set = (label: string, level: number, opt: number, value: number, max = 32767) => {
      this.#int[0] = value;
      if (this.c.setsockopt(fd, level, opt, this.#int, 4) !== 0 || this.getInt(fd, level, opt) !== value) {
        throw new UserError(`keepalive ${label} ${value} refused by the kernel (${errnoName(this.c.errno())}): pick a value from 1 to ${max}`);
      }
    };
    set("on", SOL_SOCKET, SO_KEEPALIVE, 1);
    if (k.idleS !== undefined) set("idle time", IPPROTO_TCP, TCP_KEEPIDLE, k.idleS);
    if (k.intervalS !== undefined) set("interval", IPPROTO_TCP, TCP_KEEPINTVL, k.intervalS);
    if (k.count !== undefined) set("probe count", IPPROTO_TCP, TCP_KEEPCNT, k.count, 127);
  }

  /** listen() again on a listening socket to set the backlog Bun ignores (runtime notes, C7). */
  listenBacklog(fd: number, backlog: number): void {
    if (this.c.listen(fd, backlog) !== 0) this.#fail("listen");
  }

  setNonBlocking(fd: number, on = true): void {
    const flags = this.c.fcntl(fd, F_GETFL, 0);
    if (flags < 0) this.#fail("fcntl(F_GETFL)");
    if (this.c.fcntl(fd, F_SETFL, on ? flags | O_NONBLOCK : flags & ~O_NONBLOCK) < 0) this.#fail("fcntl(F_SETFL)");
  }

  /** The pending error of a socket (SO_ERROR, cleared by reading): 0 once a non-blocking connect succeeded. */
  socketError(fd: number): number {
    return this.getInt(fd, SOL_SOCKET, SO_ERROR);
  }

  family(fd: number): SocketFamily | undefined {
    const af = this.getInt(fd, SOL_SOCKET, SO_DOMAIN);
    return af === AF_INET ? "ipv4" : af === AF_INET6 ? "ipv6" : undefined;
  }

  localAddress(fd: number): { family: SocketFamily; host: string; port: number } | undefined {
    const sa = new Uint8Array(128);
    this.#len[0] = sa.length;
    if (this.c.getsockname(fd, sa, this.#len) !== 0) this.#fail("getsockname");
    return decodeSockaddr(sa.subarray(0, this.#len[0]));
  }

  /** The kernel thread id of the calling thread (what /proc/self/task/<tid> names); undefined on old glibc. */
  threadId(): number | undefined {
    return this.c.gettid?.();
  }

  /** Whether the calling thread runs at the default nice value, 0 (getpriority's -1 error reads as "no"). */
  threadAtDefaultNice(): boolean {
    return this.c.getpriority(PRIO_PROCESS, 0) === 0;
  }

  /**
   * Sets the calling thread's nice value; false where the process may not (a value below 0 needs CAP_SYS_NICE or an
   * RLIMIT_NICE that allows it; going back up is always allowed).
   */
  setThreadNice(nice: number): boolean {
    return this.c.setpriority(PRIO_PROCESS, 0, nice) === 0;
  }

  /** Pins the calling thread (a Worker's own thread when called inside it) to one CPU. */
  pinThread(cpu: number): void {
    const allowed = () => readFileSync("/proc/self/status", "latin1").match(/^Cpus_allowed_list:\s*(\S+)/m)?.[1] ?? "?";
    if (!Number.isInteger(cpu) || cpu < 0 || cpu >= CPU_SETSIZE) {
      throw new UserError(`CPU ${cpu} does not exist: pick one of ${allowed()}`);
    }
    const mask = new BigUint64Array(CPU_SETSIZE / 64);
    mask[cpu >> 6] = 1n << BigInt(cpu & 63);
    if (this.c.sched_setaffinity(0, mask.byteLength, mask) !== 0) {
      const code = errnoName(this.c.errno());
      throw new UserError(`cannot pin to CPU ${cpu} (${code}): pick one of ${allowed()}`);
    }
  }

  /**
   * Sets the options present in `opts`, in an order where none undoes another, and reads each back. A refusal
   * throws UserError naming the option, the value, the errno name and the fix. MSS only has an effect before
   * connect or listen (use preparedTcpSocket); asking for it on a connected socket is a programming error.
   */
  apply(fd: number, opts: SocketOptions): AppliedOptions {
    const out: AppliedOptions = {};
    const tcp = this.getInt(fd, SOL_SOCKET, SO_TYPE) === SOCK_STREAM;
    const tcpOnly = (label: string) => {
      if (!tcp) throw new UserError(`${label} applies to TCP sockets only: remove it for UDP tests`);
    };
    const set = (label: string, level: number, opt: number, value: number, fix: (code: string) => string) => {
      this.#int[0] = value;
      if (this.c.setsockopt(fd, level, opt, this.#int, 4) !== 0) {
        const code = errnoName(this.c.errno());
        throw new UserError(`${label} refused by the kernel (${code}): ${fix(code)}`);
      }
    };
    const generic = (code: string) =>
      code === "EPERM" || code === "EACCES"
        ? "run with the privilege (CAP_NET_ADMIN) or drop the option"
        : "pick another value or drop the option";
    const bufferFix = (sysctl: "wmem_max" | "rmem_max") => (code: string) =>
      code === "EINVAL" || code === "ENOBUFS"
        ? `pick a smaller size (net.core.${sysctl} is ${readProcList(`/proc/sys/net/core/${sysctl}`)[0] ?? "?"})`
        : generic(code);

    if (opts.sendBuffer !== undefined) {
      set(`send buffer ${opts.sendBuffer}`, SOL_SOCKET, SO_SNDBUF, opts.sendBuffer, bufferFix("wmem_max"));
      out.sendBuffer = this.getInt(fd, SOL_SOCKET, SO_SNDBUF);
    }
    if (opts.recvBuffer !== undefined) {
      set(`receive buffer ${opts.recvBuffer}`, SOL_SOCKET, SO_RCVBUF, opts.recvBuffer, bufferFix("rmem_max"));
      out.recvBuffer = this.getInt(fd, SOL_SOCKET, SO_RCVBUF);
    }
    if (opts.noDelay !== undefined) {
      tcpOnly("TCP_NODELAY");
      set(`TCP_NODELAY ${opts.noDelay ? "on" : "off"}`, IPPROTO_TCP, TCP_NODELAY, opts.noDelay ? 1 : 0, generic);
      out.noDelay = this.getInt(fd, IPPROTO_TCP, TCP_NODELAY) !== 0;
    }
    if (opts.keepAlive !== undefined) {
      set(`SO_KEEPALIVE ${opts.keepAlive ? "on" : "off"}`, SOL_SOCKET, SO_KEEPALIVE, opts.keepAlive ? 1 : 0, generic);
      out.keepAlive = this.getInt(fd, SOL_SOCKET, SO_KEEPALIVE) !== 0;
    }
    if (opts.cork !== undefined) {
      tcpOnly("TCP_CORK");
      set(`TCP_CORK ${opts.cork ? "on" : "off"}`, IPPROTO_TCP, TCP_CORK, opts.cork ? 1 : 0, generic);
      out.cork = this.getInt(fd, IPPROTO_TCP, TCP_CORK) !== 0;
    }
    if (opts.quickAck !== undefined) {
      tcpOnly("TCP_QUICKACK");
      set(`TCP_QUICKACK ${opts.quickAck ? "on" : "off"}`, IPPROTO_TCP, TCP_QUICKACK, opts.quickAck ? 1 : 0, generic);
      out.quickAck = this.getInt(fd, IPPROTO_TCP, TCP_QUICKACK) !== 0;
    }
    if (opts.notSentLowat !== undefined) {
      tcpOnly("TCP_NOTSENT_LOWAT");
      set(`TCP_NOTSENT_LOWAT ${opts.notSentLowat}`, IPPROTO_TCP, TCP_NOTSENT_LOWAT, opts.notSentLowat, generic);
      out.notSentLowat = this.getInt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT);
    }
    if (opts.congestion !== undefined) {
      tcpOnly(`congestion control "${opts.congestion}"`);
      this.#setCongestion(fd, opts.congestion);
      const now = this.congestionControl(fd);
      if (now !== undefined) out.congestion = now;
    }
    if (opts.mss !== undefined) {
      tcpOnly(`MSS ${opts.mss}`);
      const state = this.tcpInfo(fd)?.state;
      if (state !== undefined && state !== TcpState.CLOSE && state !== TcpState.LISTEN) {
        throw new Error(`MSS must be set before connect (socket state ${state}): create the socket with preparedTcpSocket`);
      }
      set(`MSS ${opts.mss}`, IPPROTO_TCP, TCP_MAXSEG, opts.mss, (code) =>
        code === "EINVAL" ? `pick a value from ${MSS_MIN} to ${MSS_MAX}` : generic(code));
      out.mss = this.getInt(fd, IPPROTO_TCP, TCP_MAXSEG);
    }
    if (opts.tos !== undefined) {
      const hex = `0x${opts.tos.toString(16).padStart(2, "0")}`;
      const fix = (code: string) => (code === "EINVAL" ? "pick a value from 0 to 255" : generic(code));
      if (this.family(fd) === "ipv6") {
        set(`traffic class ${hex}`, IPPROTO_IPV6, IPV6_TCLASS, opts.tos, fix);
        // A dual-stack socket may carry IPv4 (mapped) traffic, which takes its TOS from IP_TOS; best effort.
        this.#int[0] = opts.tos;
        this.c.setsockopt(fd, IPPROTO_IP, IP_TOS, this.#int, 4);
        out.tos = this.getInt(fd, IPPROTO_IPV6, IPV6_TCLASS);
      } else {
        set(`TOS ${hex}`, IPPROTO_IP, IP_TOS, opts.tos, fix);
        out.tos = this.getInt(fd, IPPROTO_IP, IP_TOS);
      }
    }
    if (opts.pacingRate !== undefined) {
      this.#setPacingRate(fd, opts.pacingRate, generic);
      out.pacingRate = this.#getPacingRate(fd);
    }
    if (opts.dontFragment && this.family(fd) === "ipv4") {
      set("Don't Fragment (IP_MTU_DISCOVER)", IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DO, generic);
      out.dontFragment = this.getInt(fd, IPPROTO_IP, IP_MTU_DISCOVER) === IP_PMTUDISC_DO;
    }
    return out;
  }

  #setCongestion(fd: number, name: string): void {
    const bytes = new TextEncoder().encode(name);
    if (this.c.setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, bytes, bytes.length) === 0) return;
    const code = errnoName(this.c.errno());
    const available = this.availableCongestionControls().join(" ") || "(none listed)";
    const allowed = () => readProcList("/proc/sys/net/ipv4/tcp_allowed_congestion_control").join(" ");
    const fix =
      code === "EPERM"
        ? `only root may pick an algorithm outside net.ipv4.tcp_allowed_congestion_control: pick one of ${allowed()}`
        : `pick one of ${available}`;
    throw new UserError(`congestion control "${name}" refused by the kernel (${code}): ${fix}`);
  }

  #setPacingRate(fd: number, bytesPerSecond: number, generic: (code: string) => string): void {
    // Kernels since 4.x accept a u64 on 64-bit hosts; a u32 is all older ones read, and ~0U means "unlimited".
    const wide = bytesPerSecond > 0xffffffff;
    const value = wide ? new BigUint64Array([BigInt(bytesPerSecond)]) : new Uint32Array([bytesPerSecond]);
    if (this.c.setsockopt(fd, SOL_SOCKET, SO_MAX_PACING_RATE, value, value.byteLength) !== 0) {
      const code = errnoName(this.c.errno());
      throw new UserError(`pacing rate ${bytesPerSecond} bytes/s refused by the kernel (${code}): ${generic(code)}`);
    }
  }

  #getPacingRate(fd: number): number | undefined {
    const v = new BigUint64Array(1);
    this.#len[0] = 8;
    if (this.c.getsockopt(fd, SOL_SOCKET, SO_MAX_PACING_RATE, v, this.#len) !== 0) return undefined;
    return this.#len[0] === 8 ? Number(v[0]) : new Uint32Array(v.buffer)[0];
  }

  /**
   * A non-blocking, close-on-exec TCP socket with `opts` applied before any connect (so MSS and the receive buffer
   * shape the SYN: runtime notes R3), optionally bound to a local address. Hand it to connectNonBlocking, then to
   * Bun.connect({ fd }). On failure the socket is closed and a UserError thrown.
   */
  /**
   * A UDP socket bound with SO_REUSEADDR, optionally connected, for a Worker to adopt (`Bun.udpSocket({ fd })`).
   * Several sockets share one port this way, as iperf3's server does: the kernel hands a connected socket its
   * peer's datagrams and everything else to the unconnected one.
   */
  sharedUdpSocket(bind: { host: string; port: number }, connect?: { host: string; port: number }): number {
    const family = familyOf(bind.host);
    if (!family) throw new UserError(`${bind.host} is not an IP address: pass a numeric address to bind a shared UDP socket`);
    const fd = this.c.socket(family === "ipv4" ? AF_INET : AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) throw new UserError(`cannot create a UDP socket (${errnoName(this.c.errno())}): check the process limits`);
    try {
      this.setInt(fd, SOL_SOCKET, SO_REUSEADDR, 1);
      const sa = encodeSockaddr(family, bind.host, bind.port);
      if (this.c.bind(fd, sa, sa.length) !== 0) throw explainSocketError(new SyscallError("bind", this.c.errno()), { ...bind, role: "listen" });
      if (connect) {
        const peer = encodeSockaddr(family, connect.host, connect.port);
        if (this.c.connect(fd, peer, peer.length) !== 0) throw explainSocketError(new SyscallError("connect", this.c.errno()), { ...connect, role: "connect" });
      }
      return fd;
    } catch (e) {
      this.c.close(fd);
      throw e;
    }
  }

  preparedTcpSocket(family: SocketFamily, opts: SocketOptions, bind?: { host: string; port: number }): number {
    const fd = this.c.socket(family === "ipv4" ? AF_INET : AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      const code = errnoName(this.c.errno());
      if (code === "EMFILE" || code === "ENFILE") {
        throw new UserError(`too many open files (${code}): raise the limit (ulimit -n) or use fewer connections`);
      }
      if (code === "EAFNOSUPPORT") {
        const name = family === "ipv6" ? "IPv6" : "IPv4";
        throw new UserError(`${name} is not available on this host (${code}): use the other address family`);
      }
      throw new UserError(`cannot create a TCP socket (${code}): check the process limits`);
    }
    try {
      this.setNonBlocking(fd);
      if (bind) {
        if (bind.port !== 0) this.setInt(fd, SOL_SOCKET, SO_REUSEADDR, 1);
        const sa = encodeSockaddr(family, bind.host, bind.port);
        if (this.c.bind(fd, sa, sa.length) !== 0) {
          const err = new SyscallError("bind", this.c.errno());
          if (err.code === "EADDRINUSE") {
            const at = `${bind.host}:${bind.port}`;
            throw new UserError(`local address ${at} in use (EADDRINUSE): pass another local port or omit it`);
          }
          throw explainSocketError(err, { host: bind.host, port: bind.port, role: "listen" });
        }
      }
      this.apply(fd, opts);
      return fd;
    } catch (e) {
      this.c.close(fd);
      throw e;
    }
  }

  /**
   * Starts connecting a non-blocking socket to an IP literal (resolve names first). Returns at once; wait with
   * awaitConnected before handing the fd to Bun.connect({ fd }), because Bun calls `open` on an adopted fd at once,
   * even while the handshake is running, and reports a refused connection only as a `close`. An immediate refusal
   * throws UserError.
   */
  connectNonBlocking(fd: number, host: string, port: number): void {
    const family = this.family(fd);
    if (!family) throw new Error(`fd ${fd} is not an IPv4 or IPv6 socket`);
    const sa = encodeSockaddr(family, host, port);
    if (this.c.connect(fd, sa, sa.length) === 0) return;
    const errno = this.c.errno();
    // EINTR: Linux goes on connecting in the background, same as EINPROGRESS.
    if (errno === EINPROGRESS || errno === EINTR) return;
    throw explainSocketError(new SyscallError("connect", errno), { host, port, role: "connect" });
  }

  /**
   * Resolves once a connect started by connectNonBlocking has completed; rejects with a UserError (refused,
   * unreachable, timed out) otherwise. Polls TCP_INFO's state, starting with no delay and backing off to 20 ms, so a
   * loopback or LAN handshake adds about a millisecond at most.
   */
  async awaitConnected(fd: number, to: { host: string; port: number }, timeoutMs = 10_000): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    let delay = 0;
    for (;;) {
      const state = this.tcpInfo(fd)?.state;
      if (state === TcpState.ESTABLISHED || state === TcpState.CLOSE_WAIT) return;
      if (state !== TcpState.SYN_SENT) {
        const errno = state === undefined ? 0 : this.socketError(fd);
        const cause =
          errno !== 0
            ? new SyscallError("connect", errno)
            : new Error(`connection ended before it was established (state ${state ?? "unknown"})`);
        throw explainSocketError(cause, { ...to, role: "connect" });
      }
      if (performance.now() >= deadline) throw explainSocketError({ code: "ETIMEDOUT" }, { ...to, role: "connect" });
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay === 0 ? 1 : delay * 2, 20);
    }
  }
}

let instance: Promise<Sockopt | undefined> | undefined;

/** The thread's Sockopt on Linux glibc under Bun; undefined elsewhere (Deno, macOS, Windows, musl). */
export function loadSockopt(): Promise<Sockopt | undefined> {
  instance ??= loadLibc().then((c) => (c ? new Sockopt(c) : undefined));
  return instance;
}
