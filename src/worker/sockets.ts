import type { Net, TcpHandlers, TcpSocket } from "../net/types.ts";
import type { Endpoint, Rate, SocketOptions } from "../stream-spec.ts";
import { Pacer } from "../pacer.ts";
import type { BlockingIo } from "../sockopt/blocking-io.ts";
import type { Sockopt } from "../sockopt/sockopt.ts";
import type { PollGroup } from "./poll-group.ts";
import { familyOf } from "../sockopt/sockaddr.ts";
import { IPPROTO_TCP, SO_RCVBUF, SO_SNDBUF, SOL_SOCKET, TCP_QUICKACK } from "../sockopt/constants.ts";
import type { SocketBufferSizes } from "./messages.ts";
import type { StreamContext } from "./context.ts";

/** Everything a runner needs from its Worker: the socket API and (on Linux/Bun) socket options. */
export interface WorkerEnv {
  net: Net;
  sockopt: Sockopt | undefined;
  /** Blocking send/recv for a stream alone on its Worker (Bun on Linux glibc); undefined elsewhere. */
  io: BlockingIo | undefined;
  /** Streams this Worker owns right now, of every test. */
  streamsHere: () => number;
  /** Reads the connections of a Worker that holds only bulk receivers (with `io`); undefined elsewhere. */
  pollGroup?: PollGroup;
}

/** The part of WorkerEnv that socket set-up needs, also on the main thread. */
export type SocketEnv = Pick<WorkerEnv, "net" | "sockopt">;

const hasOptions = (o: SocketOptions) => Object.values(o).some((v) => v !== undefined);

/** Options that only work before connect (MSS, receive buffer for window scaling) or a local bind need a socket made by hand. */
const needsPreparedSocket = (o: SocketOptions, bind?: Endpoint) => bind !== undefined || o.mss !== undefined || o.recvBuffer !== undefined;

export function applyOptions(env: SocketEnv, fd: number | undefined, opts: SocketOptions): void {
  if (!hasOptions(opts)) return;
  if (env.sockopt === undefined || fd === undefined) {
    throw new Error("socket options (buffer sizes, MSS, TOS, congestion control) are set through libc, which only the Linux (glibc) build of anyperf opens: drop them on this host");
  }
  env.sockopt.apply(fd, opts);
}

/**
 * TCP_QUICKACK again, as the C tools set it before each read: the kernel drops it by itself once it falls back to
 * delayed ACKs, so one setsockopt at accept would cover the first few segments only. The option was set and read back
 * at accept (applyOptions), so `sockopt` is there; a failure now ends the stream, as it would have there.
 */
export function rearmQuickAck(env: SocketEnv, ctx: StreamContext, fd: number | undefined): void {
  if (fd === undefined || fd < 0) return;
  try {
    env.sockopt?.setInt(fd, IPPROTO_TCP, TCP_QUICKACK, 1);
  } catch (e) {
    ctx.end("error", e);
  }
}

/** SO_SNDBUF and SO_RCVBUF as getsockopt reads them; undefined without bun:ffi or once the socket is gone. */
export function readSocketBuffers(sockopt: Sockopt | undefined, fd: number | undefined): SocketBufferSizes | undefined {
  if (!sockopt || fd === undefined || fd < 0) return undefined;
  try {
    return { send: sockopt.getInt(fd, SOL_SOCKET, SO_SNDBUF), recv: sockopt.getInt(fd, SOL_SOCKET, SO_RCVBUF) };
  } catch {
    return undefined;
  }
}

/**
 * A stream's first socket with a buffer size asked for (-w): what the kernel gave, to the main thread at once, so a
 * run shorter than the first TCP_INFO sample, and UDP (never sampled), report it too.
 */
export function reportBuffers(env: SocketEnv, ctx: StreamContext, fd: number | undefined, opts: SocketOptions): void {
  if (opts.sendBuffer === undefined && opts.recvBuffer === undefined) return;
  ctx.socketBuffers(readSocketBuffers(env.sockopt, fd));
}

/**
 * Connect a TCP socket with the requested options and local bind; the returned socket is ready for data.
 *
 * Where Sockopt is available we connect the socket ourselves and hand it to the runtime: Bun reports every failed
 * connect as ECONNREFUSED, and a user told "refused, start the server" when the network is unreachable, no
 * neighbour answers or the SYNs time out looks in the wrong place; SO_ERROR names the real cause. Without options
 * or a bind the kernel's own connect timeout applies, as it did with the runtime's connect. `perTransaction`
 * (TCP_CRR) keeps the runtime's connect: its errors only count, and it is the transaction being timed.
 */
export async function connectTcp<T>(
  env: SocketEnv,
  to: Endpoint,
  bind: Endpoint | undefined,
  opts: SocketOptions,
  data: T,
  handlers: TcpHandlers<T>,
  perTransaction = false,
  allowHalfOpen = false,
): Promise<TcpSocket<T>> {
  const prepared = needsPreparedSocket(opts, bind);
  const family = familyOf(to.host);
  if (env.sockopt && family && (prepared || !perTransaction)) {
    const fd = env.sockopt.preparedTcpSocket(family, opts, bind);
    try {
      env.sockopt.connectNonBlocking(fd, to.host, to.port);
      await env.sockopt.awaitConnected(fd, to, prepared ? undefined : Infinity);
    } catch (e) {
      env.sockopt.close(fd);
      throw e;
    }
    const s = await env.net.connect({ fd, data, socket: handlers, allowHalfOpen });
    applyOptions(env, s.fd, { ...opts, mss: undefined, recvBuffer: undefined });
    return s;
  }
  const s = await env.net.connect({ hostname: to.host, port: to.port, data, socket: handlers, allowHalfOpen });
  applyOptions(env, s.fd, opts);
  return s;
}

/**
 * Senders' pacing: timers in a busy process wake late, so the bucket holds 100 ms of credit (at least two writes)
 * and a late wake-up catches up instead of losing the time; it starts with one unit of credit (the first write or
 * datagram goes at once, as the peers do) so the first interval is not a burst over the rate. Undefined when no rate is asked for.
 */
export function senderPacer(rate: Rate, unitBytes: number): Pacer | undefined {
  const { bitsPerSecond: bps = 0, packetsPerSecond: pps = 0 } = rate;
  if (!bps && !pps) return undefined;
  return new Pacer({
    ...rate,
    initialBytes: bps ? unitBytes : undefined,
    initialPackets: pps ? 1 : undefined,
    burstBytes: bps ? Math.max(2 * unitBytes, (bps / 8) * PACER_BURST_S) : undefined,
    burstPackets: pps ? Math.max(2, pps * PACER_BURST_S) : undefined,
  });
}
const PACER_BURST_S = 0.1;

/** Our FIN, keeping the read side open where the runtime allows it (else Bun's end(), which closes both ways). */
export function halfClose(env: SocketEnv, s: { fd?: number; end(): void }): void {
  if (env.sockopt && s.fd !== undefined) {
    try {
      env.sockopt.shutdownWrite(s.fd);
      return;
    } catch {
      // already closed by the peer: end() below is harmless
    }
  }
  s.end();
}
