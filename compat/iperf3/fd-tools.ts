/**
 * Handing a socket the main thread accepted or connected over to a data Worker (ARCHITECTURE: `adopt`), and the few
 * per-socket readings iperf3 reports (TCP_INFO, congestion control, MSS) taken on the main thread's own duplicate.
 *
 * Bun's terminate() sets SO_LINGER {1, 0} before closing, and the option lives on the socket, not on the fd: the
 * Worker's later close would then reset the connection instead of sending FIN. detach() clears it on the duplicate.
 */
import { UserError } from "../../src/errors.ts";
import { IPPROTO_TCP, SOL_SOCKET, TCP_MAXSEG } from "../../src/sockopt/constants.ts";
import { loadLibc, type Libc } from "../../src/sockopt/libc.ts";
import { loadSockopt, type Sockopt } from "../../src/sockopt/sockopt.ts";
import type { TcpInfo } from "../../src/sockopt/tcp-info.ts";

const SO_LINGER = 13;

export interface FdTools {
  /** A duplicate of the socket's fd that survives the Bun socket, which is closed without resetting the peer. */
  detach(socket: { readonly fd?: number; terminate(): void }): number;
  dup(fd: number): number;
  close(fd: number): void;
  tcpInfo(fd: number): TcpInfo | undefined;
  congestion(fd: number): string | undefined;
  maxSeg(fd: number): number | undefined;
  readonly sockopt: Sockopt;
}

let tools: Promise<FdTools | undefined> | undefined;

/** undefined where bun:ffi/glibc is missing (Deno, macOS, musl): the iperf3 glue then cannot adopt sockets. */
export function loadFdTools(): Promise<FdTools | undefined> {
  tools ??= Promise.all([loadSockopt(), loadLibc()]).then(([so, c]) => (so && c ? make(so, c) : undefined));
  return tools;
}

export async function requireFdTools(): Promise<FdTools> {
  const t = await loadFdTools();
  if (!t) throw new UserError("the iperf3 mode hands sockets to data Workers through libc: run the Linux (glibc) build under Bun");
  return t;
}

function make(so: Sockopt, c: Libc): FdTools {
  const noLinger = new Int32Array([0, 0]);
  return {
    sockopt: so,
    detach(socket) {
      if (socket.fd === undefined || socket.fd < 0) throw new Error("socket has no file descriptor to hand over");
      const fd = so.dup(socket.fd);
      socket.terminate();
      if (c.setsockopt(fd, SOL_SOCKET, SO_LINGER, noLinger, 8) !== 0) {
        so.close(fd);
        throw new Error(`cannot clear SO_LINGER on fd ${fd} (errno ${c.errno()})`);
      }
      return fd;
    },
    dup: (fd) => so.dup(fd),
    close: (fd) => so.close(fd),
    tcpInfo: (fd) => so.tcpInfo(fd),
    congestion: (fd) => so.congestionControl(fd),
    maxSeg(fd) {
      try {
        return so.getInt(fd, IPPROTO_TCP, TCP_MAXSEG);
      } catch {
        return undefined;
      }
    },
  };
}
