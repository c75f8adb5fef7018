/**
 * The one way a front end gives a socket it accepted or connected on the main thread to the streams (a StreamSpec's
 * `adopt`): a dup()ed descriptor a data Worker adopts where libc is reachable through bun:ffi (Linux glibc under
 * Bun), else the socket itself parked for the main thread's own stream host (src/net/local-hand-off.ts: Windows,
 * macOS, musl, Deno, or ANYPERF_LOCAL_HAND_OFF=1).
 *
 * `sockopt` is there only on the descriptor path: on the local path every descriptor a front end holds is a parked
 * socket's id, so per-socket readings (TCP_INFO, congestion control, MSS, buffer sizes) are unknown and the front
 * ends print what their peer prints when it cannot tell.
 */
import { loadSockopt, type Sockopt } from "../sockopt/sockopt.ts";
import { park } from "./local-hand-off.ts";
import { handOffIsLocal } from "./net.ts";
import type { TcpSocket } from "./types.ts";

export interface Adopt {
  fd: number;
  local: boolean;
}

export interface HandOff {
  /** Socket options and readings on descriptors; undefined on the local path. */
  readonly sockopt: Sockopt | undefined;
  /** Takes `s` away from its front end for one stream. */
  tcp(s: TcpSocket<unknown>): Adopt;
}

let loaded: Promise<HandOff> | undefined;

export function loadHandOff(): Promise<HandOff> {
  loaded ??= (async () => {
    const so = (await handOffIsLocal()) ? undefined : await loadSockopt();
    if (!so) return { sockopt: undefined, tcp: (s) => ({ fd: park(s), local: true }) };
    return { sockopt: so, tcp: (s) => ({ fd: so.handOff(s)[0]!, local: false }) };
  })();
  return loaded;
}
