/**
 * The few glibc functions we call through bun:ffi. bun:ffi is imported lazily so that Deno (which has no bun:ffi)
 * and non-Linux builds can load every module and just see "unavailable".
 */

type Buf = NodeJS.TypedArray;

export interface Libc {
  socket(domain: number, type: number, protocol: number): number;
  bind(fd: number, addr: Buf, len: number): number;
  connect(fd: number, addr: Buf, len: number): number;
  listen(fd: number, backlog: number): number;
  setsockopt(fd: number, level: number, opt: number, value: Buf, len: number): number;
  getsockopt(fd: number, level: number, opt: number, value: Buf, len: Buf): number;
  getsockname(fd: number, addr: Buf, len: Buf): number;
  dup(fd: number): number;
  close(fd: number): number;
  shutdown(fd: number, how: number): number;
  fcntl(fd: number, cmd: number, arg: number): number;
  sched_setaffinity(tid: number, size: number, mask: Buf): number;
  getpriority(which: number, who: number): number;
  setpriority(which: number, who: number, prio: number): number;
  /** ioctl with a pointer argument. */
  ioctl(fd: number, request: number, arg: Buf): number;
  /** `limit` is struct rlimit: two u64, soft then hard. */
  getrlimit(resource: number, limit: Buf): number;
  setrlimit(resource: number, limit: Buf): number;
  /** The calling thread's kernel id; undefined with glibc < 2.30, which lacks gettid(). */
  gettid: (() => number) | undefined;
  /** errno of the last failed call on this thread; read it right after the call, before anything else runs. */
  errno(): number;
}

let loaded: Promise<Libc | undefined> | undefined;

/** glibc on Linux under Bun, once per thread (each Worker has its own module instance); undefined elsewhere. */
export function loadLibc(): Promise<Libc | undefined> {
  loaded ??= open();
  return loaded;
}

async function open(): Promise<Libc | undefined> {
  if (typeof Bun === "undefined" || process.platform !== "linux") return undefined;
  // On musl there is no libc.so.6, so dlopen throws and we report "unavailable".
  try {
    const { dlopen, read } = await import("bun:ffi");
    const { symbols: c } = dlopen("libc.so.6", {
      socket: { args: ["i32", "i32", "i32"], returns: "i32" },
      bind: { args: ["i32", "ptr", "u32"], returns: "i32" },
      connect: { args: ["i32", "ptr", "u32"], returns: "i32" },
      listen: { args: ["i32", "i32"], returns: "i32" },
      setsockopt: { args: ["i32", "i32", "i32", "ptr", "u32"], returns: "i32" },
      getsockopt: { args: ["i32", "i32", "i32", "ptr", "ptr"], returns: "i32" },
      getsockname: { args: ["i32", "ptr", "ptr"], returns: "i32" },
      dup: { args: ["i32"], returns: "i32" },
      close: { args: ["i32"], returns: "i32" },
      shutdown: { args: ["i32", "i32"], returns: "i32" },
      // variadic in C; an int third argument travels in the same register as a fixed one on x86-64 and arm64 Linux
      fcntl: { args: ["i32", "i32", "i32"], returns: "i32" },
      sched_setaffinity: { args: ["i32", "u64", "ptr"], returns: "i32" },
      getpriority: { args: ["i32", "u32"], returns: "i32" },
      setpriority: { args: ["i32", "u32", "i32"], returns: "i32" },
      // variadic in C; its pointer argument travels as a fixed one would (x86-64 and arm64 Linux)
      ioctl: { args: ["i32", "u64", "ptr"], returns: "i32" },
      getrlimit: { args: ["i32", "ptr"], returns: "i32" },
      setrlimit: { args: ["i32", "ptr"], returns: "i32" },
      __errno_location: { args: [], returns: "ptr" },
    });
    let gettid: (() => number) | undefined;
    try {
      const t = dlopen("libc.so.6", { gettid: { args: [], returns: "i32" } }).symbols;
      gettid = () => t.gettid();
    } catch {
      gettid = undefined;
    }
    const errnoAt = c.__errno_location();
    return {
      socket: (d, t, p) => c.socket(d, t, p),
      bind: (fd, a, l) => c.bind(fd, a, l),
      connect: (fd, a, l) => c.connect(fd, a, l),
      listen: (fd, n) => c.listen(fd, n),
      setsockopt: (fd, lv, o, v, l) => c.setsockopt(fd, lv, o, v, l),
      getsockopt: (fd, lv, o, v, l) => c.getsockopt(fd, lv, o, v, l),
      getsockname: (fd, a, l) => c.getsockname(fd, a, l),
      dup: (fd) => c.dup(fd),
      close: (fd) => c.close(fd),
      shutdown: (fd, how) => c.shutdown(fd, how),
      fcntl: (fd, cmd, arg) => c.fcntl(fd, cmd, arg),
      sched_setaffinity: (tid, size, mask) => c.sched_setaffinity(tid, size, mask),
      getpriority: (which, who) => c.getpriority(which, who),
      setpriority: (which, who, prio) => c.setpriority(which, who, prio),
      ioctl: (fd, request, arg) => c.ioctl(fd, request, arg),
      getrlimit: (r, l) => c.getrlimit(r, l),
      setrlimit: (r, l) => c.setrlimit(r, l),
      gettid,
      // errno lives at a fixed per-thread address, so one lookup per thread is enough.
      errno: () => (errnoAt === null ? 0 : read.i32(errnoAt, 0)),
    };
  } catch {
    return undefined;
  }
}
