/** Linux socket constants (asm-generic and x86/arm64 alike); other systems use other numbers and never load this. */

export const AF_INET = 2;
export const AF_INET6 = 10;
export const SOCK_STREAM = 1;
export const SOCK_DGRAM = 2;
export const SOCK_CLOEXEC = 0o2000000;

export const SOL_SOCKET = 1;
export const SO_REUSEADDR = 2;
/** Each datagram read carries its arrival (struct timespec, wall clock) as an SCM_TIMESTAMPNS control message. */
export const SO_TIMESTAMPNS = 35;
/** That control message's type: the option's own number. */
export const SCM_TIMESTAMPNS = SO_TIMESTAMPNS;
export const SO_TYPE = 3;
export const SO_ERROR = 4;
export const SO_SNDBUF = 7;
export const SO_RCVBUF = 8;
export const SO_RCVLOWAT = 18;
export const SO_KEEPALIVE = 9;
export const SO_REUSEPORT = 15;
export const SO_DOMAIN = 39;
export const SO_MAX_PACING_RATE = 47;

export const IPPROTO_IP = 0;
export const IP_TOS = 1;
export const IP_MTU_DISCOVER = 10;
/** IP_MTU_DISCOVER value: never fragment, set DF on every datagram. */
export const IP_PMTUDISC_DO = 2;

export const IPPROTO_TCP = 6;
export const TCP_NODELAY = 1;
export const TCP_MAXSEG = 2;
export const TCP_CORK = 3;
export const TCP_KEEPIDLE = 4;
export const TCP_KEEPINTVL = 5;
export const TCP_KEEPCNT = 6;
export const TCP_INFO = 11;
export const TCP_QUICKACK = 12;
export const TCP_CONGESTION = 13;
export const TCP_NOTSENT_LOWAT = 25;

export const IPPROTO_IPV6 = 41;
export const IPV6_V6ONLY = 26;
export const IPV6_TCLASS = 67;

export const F_GETFL = 3;
export const F_SETFL = 4;
export const O_NONBLOCK = 0o4000;

export const EINPROGRESS = 115;

/** TCP states as TCP_INFO reports them (include/net/tcp_states.h). */
export const TcpState = {
  ESTABLISHED: 1,
  SYN_SENT: 2,
  SYN_RECV: 3,
  FIN_WAIT1: 4,
  FIN_WAIT2: 5,
  TIME_WAIT: 6,
  CLOSE: 7,
  CLOSE_WAIT: 8,
  LAST_ACK: 9,
  LISTEN: 10,
  CLOSING: 11,
} as const;

/** Valid TCP_MAXSEG values: below 88 or above MAX_TCP_WINDOW the kernel answers EINVAL. */
export const MSS_MIN = 88;
export const MSS_MAX = 32767;

/** getpriority/setpriority's `which`; with `who` 0, Linux applies it to the calling thread alone. */
export const PRIO_PROCESS = 0;
/** Bits of a cpu_set_t passed to sched_setaffinity: glibc's CPU_SETSIZE. */
export const CPU_SETSIZE = 1024;
