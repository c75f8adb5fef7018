import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { UserError, explainSocketError } from "../../src/errors.ts";
import type { Net, TcpHandlers, TcpSocket } from "../../src/net/types.ts";
import type { Sockopt } from "../../src/sockopt/sockopt.ts";
import type { Adopt, HandOff } from "../../src/net/hand-off.ts";
import { DataPlane } from "../../src/engine/data-plane.ts";
import type { Endpoint, SocketOptions, StreamSpecInput } from "../../src/stream-spec.ts";
import { connectTcp } from "../../src/worker/sockets.ts";
import { type TcpInit, TcpStatsTracker, tcpInit } from "./tcp-stats.ts";

/**
 * iperf 2 TCP connections are made (or accepted) on the main thread and then handed to a Worker: the main thread
 * reads TCP_INFO right after the handshake for the connection line's (icwnd/mss/irtt=...), writes a -R header, and
 * for -e keeps one descriptor of the socket so it can sample retransmits, cwnd and RTT while the Worker sends.
 */

export interface Handed {
  /** The descriptor the Worker adopts. */
  fd: number;
  /** -e: TCP_INFO of the socket while the Worker owns it. */
  tcp?: TcpStatsTracker;
  /** What the stream's spec adopts. */
  adopt: Adopt;
  /**
   * Closes the descriptor kept for TCP_INFO. Call it as soon as the stream has ended (after its final report): while
   * it is open the kernel socket stays open, so a Worker's close alone sends no FIN.
   */
  release(): void;
}

/** The connection line's figures of a connected or accepted socket (undefined where TCP_INFO is unavailable). */
export function initialTcp(sockopt: Sockopt | undefined, s: { fd?: number }): TcpInit | undefined {
  return s.fd !== undefined ? tcpInit(sockopt?.tcpInfo(s.fd)) : undefined;
}

/**
 * Takes `s` away from its handlers for one stream (src/net/hand-off.ts); with `keepInfo` and libc one duplicate
 * stays here for TCP_INFO (on the local path -e's TCP figures are unknown, as on a host without TCP_INFO).
 */
export function handToWorker(handOff: HandOff, s: TcpSocket<unknown>, keepInfo: boolean): Handed {
  const sockopt = handOff.sockopt;
  const info = keepInfo && sockopt && s.fd !== undefined ? sockopt.dup(s.fd) : undefined;
  // "(sock=N)" names a descriptor: a parked socket's id is not one, the socket's own (which it keeps) is.
  const own = s.fd;
  const adopt = handOff.tcp(s);
  const fd = adopt.local ? (own ?? adopt.fd) : adopt.fd;
  if (info === undefined || !sockopt) return { fd, adopt, release: () => {} };
  const infoFd = info;
  let open = true;
  return {
    fd,
    adopt,
    tcp: new TcpStatsTracker(() => (open ? sockopt.tcpInfo(infoFd) : undefined)),
    release: () => {
      if (!open) return;
      open = false;
      sockopt.close(infoFd);
    },
  };
}

/**
 * A Worker plane on the handed-over fd (`go`: started as soon as it is open, DataPlane.open); when it cannot open,
 * the duplicate kept here for TCP_INFO is closed too.
 */
export async function openOnHanded(handed: Handed, spec: StreamSpecInput, opts: { go?: boolean } = {}): Promise<DataPlane> {
  try {
    return await DataPlane.open([spec], opts);
  } catch (e) {
    handed.release();
    throw e;
  }
}

/** An IP literal for `host` (the socket options that must precede connect need a socket made by hand). */
export async function resolveHost(host: string, ipv6: boolean): Promise<string> {
  if (isIP(host)) return host;
  try {
    return (await lookup(host, { family: ipv6 ? 6 : 4 })).address;
  } catch (e) {
    throw explainSocketError(e, { host, port: 0, role: "connect" });
  }
}

/**
 * Connects on the main thread with the options applied before connect (-M, -w, -B), like iperf's own sockets; a
 * socket that stays here (a --bounceback client) passes its own data and handlers.
 */
export async function connectMain<T = null>(
  io: { net: Net; sockopt: Sockopt | undefined },
  to: Endpoint,
  options: SocketOptions,
  bind?: Endpoint,
  own?: { data: T; handlers: TcpHandlers<T> },
): Promise<TcpSocket<T>> {
  try {
    return await connectTcp(io, to, bind, options, (own?.data ?? null) as T, own?.handlers ?? { data: () => {}, error: () => {} });
  } catch (e) {
    throw e instanceof UserError ? e : explainSocketError(e, { host: to.host, port: to.port, role: "connect" });
  }
}
