/**
 * getsockopt on the TCP sockets another process holds (our server under test): their descriptors are found by their
 * ports through /proc (the socket's inode), copied into this process with pidfd_getfd(2), read, and closed. For
 * options `ss` does not show (TCP_NOTSENT_LOWAT), or shows only now and then (keepalive, in its timer column while
 * no retransmission is pending). Linux 5.6+, the same user (or CAP_SYS_PTRACE).
 */
import { readFileSync, readdirSync, readlinkSync } from "node:fs";

const SYS_PIDFD_OPEN = 434;
const SYS_PIDFD_GETFD = 438;

/** Which established connections to read: by their local and remote ports. */
export type PortMatch = (localPort: number, remotePort: number) => boolean;

/** Inodes of the ESTABLISHED TCP sockets `where` takes, from /proc/net/tcp and tcp6. */
function inodesWhere(where: PortMatch): Set<string> {
  const out = new Set<string>();
  const port = (field: string) => parseInt(field.split(":").at(-1)!, 16);
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    for (const line of readFileSync(table, "latin1").split("\n").slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10) continue;
      if (f[3] === "01" && where(port(f[1]!), port(f[2]!))) out.add(f[9]!);
    }
  }
  return out;
}

/** Each int value of `level`/`name` on the sockets process `pid` holds that `where` takes (one per socket). */
export async function peerSocketInts(pid: number, where: PortMatch, level: number, name: number): Promise<number[]> {
  const inodes = inodesWhere(where);
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
