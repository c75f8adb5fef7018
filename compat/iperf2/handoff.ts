import type { TcpSocket } from "../../src/net/types.ts";
import { type Libc, loadLibc } from "../../src/sockopt/libc.ts";
import type { Sockopt } from "../../src/sockopt/sockopt.ts";

const SOL_SOCKET = 1;
const SO_LINGER = 13;
let libc: Libc | undefined;
void loadLibc().then((c) => (libc = c));

/**
 * Takes an accepted or connected main-thread socket away from Bun so that Workers can adopt it: `count` duplicates of
 * its fd, then the main-thread socket is terminated. Bun's terminate() sets SO_LINGER {on, 0} first, and that option
 * belongs to the socket, not the fd: left alone, the Worker's final close would send an RST instead of a FIN, and
 * the stock client prints "recv failed: Connection reset by peer". So linger is switched off again on a duplicate.
 * (Needed by every adopt user; this belongs in src/sockopt, where the lead can move it.)
 */
export function handOff<T>(s: TcpSocket<T>, sockopt: Sockopt, count: 1 | 2): number[] {
  const fd = s.fd;
  if (fd === undefined) throw new Error("socket has no fd to hand to a Worker");
  const fds = count === 2 ? [sockopt.dup(fd), sockopt.dup(fd)] : [sockopt.dup(fd)];
  s.terminate();
  libc?.setsockopt(fds[0]!, SOL_SOCKET, SO_LINGER, new Int32Array([0, 0]), 8);
  return fds;
}
