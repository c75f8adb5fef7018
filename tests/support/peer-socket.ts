/**
 * getsockopt on a TCP socket another process holds (our server under test): its descriptor is found by its local
 * port through /proc (the socket's inode), copied into this process with pidfd_getfd(2), read, and closed. For
 * options `ss` does not show (TCP_NOTSENT_LOWAT). Linux 5.6+, the same user (or CAP_SYS_PTRACE).
 */
import { readFileSync, readdirSync, readlinkSync } from "node:fs";

const SYS_PIDFD_OPEN = 434;
const SYS_PIDFD_GETFD = 438;

/** Inodes of the ESTABLISHED TCP sockets bound to local port `port`, from /proc/net/tcp and tcp6. */
function inodesOnPort(port: number): Set<string> {
  const out = new Set<string>();
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    for (const line of readFileSync(table, "latin1").split("\n").slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10) continue;
      const localPort = parseInt(f[1]!.split(":")[1]!, 16);
      if (localPort === port && f[3] === "01") out.add(f[9]!);
    }
  }
  return out;
}

/** Each int value of `level`/`name` on the sockets process `pid` holds on local port `port` (one per socket). */
export async function peerSocketInts(pid: number, port: number, level: number, name: number): Promise<number[]> {
  const inodes = inodesOnPort(port);
  const fds = readdirSync(`/proc/${pid}/fd`).filter((fd) => {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      return m !== null && inodes.has(m[1]!);
    } catch {
      return false;
    }
  });
  const { dlopen, ptr } = await import("bun:ffi");
  const { symbols: c } = dlopen("libc.so.6", {
    syscall: { args: ["i64", "i64", "i64", "i64"], returns: "i64" },
    getsockopt: { args: ["i32", "i32", "i32", "ptr", "ptr"], returns: "i32" },
    close: { args: ["i32"], returns: "i32" },
  });
  const pidfd = Number(c.syscall(SYS_PIDFD_OPEN, pid, 0, 0));
  if (pidfd < 0) throw new Error(`pidfd_open(${pid}) failed`);
  const seen = new Set<number>();
  const values: number[] = [];
  try {
    for (const fd of fds) {
      const mine = Number(c.syscall(SYS_PIDFD_GETFD, pidfd, Number(fd), 0));
      if (mine < 0) continue;
      try {
        const v = new Int32Array(1);
        const len = new Uint32Array([4]);
        // Dups of one socket (a Worker's adopted copy) read the same: count each inode once.
        const inode = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${mine}`))![1]!;
        if (seen.has(Number(inode))) continue;
        seen.add(Number(inode));
        if (c.getsockopt(mine, level, name, ptr(v), ptr(len)) === 0) values.push(v[0]!);
      } finally {
        c.close(mine);
      }
    }
  } finally {
    c.close(pidfd);
  }
  return values;
}
