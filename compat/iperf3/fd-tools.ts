/**
 * Handing a socket the main thread accepted or connected over to the streams (the engine's hand-off,
 * src/net/hand-off.ts), and the few per-socket readings iperf3 reports (TCP_INFO, congestion control, MSS, buffer
 * sizes) taken on a main-thread duplicate. On the local hand-off path (no libc: Windows, macOS, musl) the readings
 * are unknown: undefined here, printed as 3.12 prints a figure its OS does not give (0, or the line left out).
 */
import { UserError } from "../../src/errors.ts";
import { IErrno } from "../../interop/iperf3/error-codes.ts";
import { Errno, errnoOfError } from "../../lib/errno.ts";
import { Iperf3ProtocolError } from "../../interop/iperf3/framing.ts";
import { IPPROTO_TCP, SO_RCVBUF, SO_SNDBUF, SOL_SOCKET, TCP_MAXSEG } from "../../src/sockopt/constants.ts";
import type { Sockopt } from "../../src/sockopt/sockopt.ts";
import type { TcpInfo } from "../../src/sockopt/tcp-info.ts";
import { loadHandOff, type Adopt } from "../../src/net/hand-off.ts";
import type { TcpSocket } from "../../src/net/types.ts";

export interface FdTools {
  /** Takes the socket for one stream; `info` is a main-thread duplicate for the readings (the caller closes it). */
  detach(socket: TcpSocket<unknown>): Adopt & { info: number | undefined };
  close(fd: number): void;
  tcpInfo(fd: number): TcpInfo | undefined;
  congestion(fd: number): string | undefined;
  /** -C on a data socket, as 3.12 sets it on each one it connects or accepts; failing is IESETCONGESTION. */
  setCongestion(fd: number | undefined, name: string): void;
  /**
   * -M on a server: TCP_MAXSEG on its listener, whose SYN-ACKs then advertise it (0 restores the route's), as 3.12
   * re-creates its listener with it; failing is IESETMSS.
   */
  listenerMss(fd: number | undefined, mss: number): void;
  /** -A n: the main thread (control connections, timers) on CPU n, as 3.12's whole process; refused in 3.12's words. */
  pinMain(cpu: number): void;
  maxSeg(fd: number): number | undefined;
  sndbuf(fd: number): number | undefined;
  rcvbuf(fd: number): number | undefined;
  localAddress(fd: number): { host: string; port: number } | undefined;
  /** undefined on the local hand-off path. */
  readonly sockopt: Sockopt | undefined;
}

let tools: Promise<FdTools> | undefined;

export function loadFdTools(): Promise<FdTools> {
  tools ??= loadHandOff().then((h) => {
    const so = h.sockopt;
    const read = <T>(f: (so: Sockopt) => T): T | undefined => {
      if (!so) return undefined;
      try {
        return f(so);
      } catch {
        return undefined;
      }
    };
    return {
      sockopt: so,
      detach(socket) {
        const a = h.tcp(socket);
        return { ...a, info: a.local ? undefined : so?.dup(a.fd) };
      },
      close: (fd) => so?.close(fd),
      pinMain(cpu) {
        if (!so) throw new UserError("unable to set CPU affinity: -A needs the Linux (glibc) build of anyperf; drop -A", 1);
        try {
          so.pinThread(cpu);
        } catch (e) {
          throw new UserError(`unable to set CPU affinity: ${(e as Error).message}`, 1);
        }
      },
      setCongestion(fd, name) {
        try {
          if (!so || fd === undefined) throw new Error("-C needs the Linux (glibc) build of anyperf (no TCP_CONGESTION on this OS)");
          so.apply(fd, { congestion: name });
        } catch (e) {
          throw new Iperf3ProtocolError((e as Error).message, IErrno.IESETCONGESTION, Errno.ENOENT);
        }
      },
      listenerMss(fd, mss) {
        try {
          if (!so || fd === undefined) throw new Error("-M on a server needs the Linux (glibc) build of anyperf (no TCP_MAXSEG on this OS)");
          so.setInt(fd, IPPROTO_TCP, TCP_MAXSEG, mss);
        } catch (e) {
          throw new Iperf3ProtocolError((e as Error).message, IErrno.IESETMSS, errnoOfError(e, Errno.EINVAL));
        }
      },
      tcpInfo: (fd) => read((so) => so.tcpInfo(fd)),
      congestion: (fd) => read((so) => so.congestionControl(fd)),
      maxSeg: (fd) => read((so) => so.getInt(fd, IPPROTO_TCP, TCP_MAXSEG)),
      sndbuf: (fd) => read((so) => so.getInt(fd, SOL_SOCKET, SO_SNDBUF)),
      rcvbuf: (fd) => read((so) => so.getInt(fd, SOL_SOCKET, SO_RCVBUF)),
      localAddress: (fd) => read((so) => so.localAddress(fd)),
    };
  });
  return tools;
}
