/**
 * Handing a socket the main thread accepted or connected over to a data Worker (ARCHITECTURE: `adopt`, through the
 * engine's Sockopt.handOff, which also undoes the SO_LINGER that Bun's terminate() leaves on the socket), and the
 * few per-socket readings iperf3 reports (TCP_INFO, congestion control, MSS) taken on a main-thread duplicate.
 */
import { UserError } from "../../src/errors.ts";
import { Errno, IErrno } from "../../interop/iperf3/error-codes.ts";
import { Iperf3ProtocolError } from "../../interop/iperf3/framing.ts";
import { IPPROTO_TCP, TCP_MAXSEG } from "../../src/sockopt/constants.ts";
import { loadSockopt, type Sockopt } from "../../src/sockopt/sockopt.ts";
import type { TcpInfo } from "../../src/sockopt/tcp-info.ts";

export interface FdTools {
  /** A duplicate of the socket's fd that survives the Bun socket, which is closed without resetting the peer. */
  detach(socket: { readonly fd?: number; terminate(): void }): number;
  dup(fd: number): number;
  close(fd: number): void;
  tcpInfo(fd: number): TcpInfo | undefined;
  congestion(fd: number): string | undefined;
  /** -C on a data socket, as 3.12 sets it on each one it connects or accepts; failing is IESETCONGESTION. */
  setCongestion(fd: number, name: string): void;
  /** -A n: the main thread (control connections, timers) on CPU n, as 3.12's whole process; refused in 3.12's words. */
  pinMain(cpu: number): void;
  maxSeg(fd: number): number | undefined;
  readonly sockopt: Sockopt;
}

let tools: Promise<FdTools | undefined> | undefined;

/** undefined where bun:ffi/glibc is missing (Deno, macOS, musl): the iperf3 glue then cannot adopt sockets. */
export function loadFdTools(): Promise<FdTools | undefined> {
  tools ??= loadSockopt().then((so) => (so ? make(so) : undefined));
  return tools;
}

export async function requireFdTools(): Promise<FdTools> {
  const t = await loadFdTools();
  if (!t) throw new UserError("the iperf3 mode hands sockets to data Workers through libc: run the Linux (glibc) build under Bun");
  return t;
}

function make(so: Sockopt): FdTools {
  return {
    sockopt: so,
    detach: (socket) => so.handOff(socket)[0]!,
    dup: (fd) => so.dup(fd),
    close: (fd) => so.close(fd),
    tcpInfo: (fd) => so.tcpInfo(fd),
    congestion: (fd) => so.congestionControl(fd),
    pinMain(cpu) {
      try {
        so.pinThread(cpu);
      } catch (e) {
        throw new UserError(`unable to set CPU affinity: ${(e as Error).message}`, 1);
      }
    },
    setCongestion(fd, name) {
      try {
        so.apply(fd, { congestion: name });
      } catch (e) {
        throw new Iperf3ProtocolError((e as Error).message, IErrno.IESETCONGESTION, Errno.ENOENT);
      }
    },
    maxSeg(fd) {
      try {
        return so.getInt(fd, IPPROTO_TCP, TCP_MAXSEG);
      } catch {
        return undefined;
      }
    },
  };
}
